package npybridge

// DataAt returns the NPY header of the stored member called name and the
// archive offset of its first data byte: its DataLen bytes lie there as
// they are, column-major when the header says FortranOrder, for a reader
// that points at them in place (a Zarr reference, a mapping) rather than
// read them through the archive. It reads what Header reads (one read of
// at most 4 KiB for the local and NPY headers) and checks what Header
// checks: the member holds exactly the data its header declares, within
// its place in the archive.
// It fails as Header does, and with an error wrapping ErrCompressed for
// a deflated member (np.savez_compressed), without reading it.
func (z *NPZ) DataAt(name string) (*Header, int64, error) {
	e, err := z.member(name)
	if err != nil {
		return nil, 0, err
	}
	if e.method != zipStore {
		return nil, 0, memberError(name, errAt(ErrCompressed, e.record, "the member is deflated; its data does not lie in the archive as it is"))
	}
	h, m, err := z.openMember(name, e, false)
	if err != nil {
		return nil, 0, err
	}
	m.Close()
	return h, m.dataAt + h.DataOffset, nil
}
