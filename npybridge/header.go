package npybridge

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"

	"github.com/ndpack/ndpack/ndarray"
)

// Magic is the string every NPY file starts with.
const Magic = "\x93NUMPY"

// DefaultMaxHeaderSize is numpy's own limit on the header text (10000
// bytes), beyond which it refuses to parse a header as unsafe.
const DefaultMaxHeaderSize = 10000

// Header is what an NPY file says about its array, read without touching
// the data (like image.DecodeConfig).
type Header struct {
	DType        ndarray.DType // from descr: a typestr or a record's descr list
	Shape        []int         // as the file states it, whatever FortranOrder
	FortranOrder bool          // the data is column-major on disk
	Major, Minor int           // format version: 1.0, 2.0 or 3.0
	DataOffset   int64         // where the data starts: magic, version, length and header text

	objects bool // an object array (descr 'O'), read only by ReadObjects; DType is zero
}

// DataLen returns the number of data bytes the header announces. It was
// checked not to overflow when the header was read.
func (h *Header) DataLen() int64 {
	n, _ := ndarray.ByteSize(h.DType, h.Shape)
	return int64(n)
}

// ReadOptions controls reading. The zero value is the default.
type ReadOptions struct {
	// MaxHeaderSize bounds the header text in bytes; 0 means
	// DefaultMaxHeaderSize. numpy refuses longer headers unless told to
	// trust the file; raise it for files with very many dimensions.
	MaxHeaderSize int
	// AllowObjects lets ReadObjects (and NPZ.ReadObjects) read object
	// arrays, whose data is a pickle, as np.load(allow_pickle=True) does,
	// but through a reader that runs nothing (see ReadObjects). Without it
	// they are refused with ErrObjectArray, as np.load refuses them by
	// default; Read refuses them either way, since they hold no
	// ndarray.Array.
	AllowObjects bool
	// NativeOrder converts the data to the machine's byte order as it is
	// read, in the buffer it was read into (ndarray.Array.SetOrder), as
	// np.load followed by an in-place byteswap does; without it the
	// file's byte order is kept.
	NativeOrder bool
	// MaxObjectsSize bounds, in bytes, what reading an object array's
	// pickle may cost: the pickle's bytes read, the memory its values
	// take, and their size written out, each value the pickle shares
	// counted at every place it appears (a 1 MiB str referred to 200,000
	// times is 200 GiB of output, and refused). 0 means
	// DefaultObjectsFactor times the bytes the pickle takes in the input
	// (in an .npz, compressed), plus DefaultObjectsSlack. A refusal wraps
	// ndarray.ErrTooLarge.
	MaxObjectsSize int64
}

func (o ReadOptions) maxHeader() int {
	if o.MaxHeaderSize > 0 {
		return o.MaxHeaderSize
	}
	return DefaultMaxHeaderSize
}

// ReadHeader reads the header of an NPY file, leaving r at the first data
// byte.
// It fails with an *ndarray.Error wrapping ndarray.ErrTruncated when r ends inside the
// header, ErrNotNPY without the magic string, ErrVersion, ndarray.ErrTooLarge
// over MaxHeaderSize, ndarray.ErrMalformed for a malformed dict, and ErrUnsupported
// (ErrObjectArray) for an object array; r's own read errors are returned
// as they are.
func (o ReadOptions) ReadHeader(r io.Reader) (*Header, error) { return o.readHeader(r, false, "") }

// readHeader is ReadHeader that, when objects is set, also accepts an
// object array's header. npzCall names, for an input that is a zip
// archive, the call that reads it as an .npz, the one beside the
// caller's ("OpenNPZFile" beside ReadFile), or is "".
func (o ReadOptions) readHeader(r io.Reader, objects bool, npzCall string) (*Header, error) {
	bp := headerBufs.Get().(*[]byte)
	defer headerBufs.Put(bp)
	pre := (*bp)[:12]
	if _, err := io.ReadFull(r, pre[:10]); err != nil {
		return nil, truncated(err, 0, "the magic string, version and header length")
	}
	if string(pre[:6]) != Magic {
		return nil, notNPY(pre[:6], npzCall)
	}
	h := &Header{Major: int(pre[6]), Minor: int(pre[7])}
	var hlen int64
	switch {
	case h.Major == 1 && h.Minor == 0:
		hlen = int64(binary.LittleEndian.Uint16(pre[8:]))
		h.DataOffset = 10
	case (h.Major == 2 || h.Major == 3) && h.Minor == 0:
		if _, err := io.ReadFull(r, pre[10:12]); err != nil {
			return nil, truncated(err, 10, "the header length")
		}
		hlen = int64(binary.LittleEndian.Uint32(pre[8:]))
		h.DataOffset = 12
	default:
		return nil, errAt(ErrVersion, 6, "version %d.%d; only 1.0, 2.0 and 3.0 exist", h.Major, h.Minor)
	}
	// numpy's limit counts characters: a UTF-8 (3.0) header may hold up
	// to 4 bytes for each.
	limit := int64(o.maxHeader())
	if h.Major == 3 {
		limit *= utf8.UTFMax
	}
	if hlen > limit {
		return nil, &ndarray.Error{Pkg: "npybridge", Err: errHeaderTooLarge, Offset: 8, Option: "ReadOptions.MaxHeaderSize",
			Detail: fmt.Sprintf("header of %d bytes exceeds the limit of %d", hlen, o.maxHeader())}
	}
	var text []byte // bounded by the limit just checked
	if 12+hlen <= int64(cap(*bp)) {
		text = (*bp)[12 : 12+hlen]
	} else {
		text = make([]byte, hlen)
	}
	if _, err := io.ReadFull(r, text); err != nil {
		return nil, truncated(err, h.DataOffset, fmt.Sprintf("the %d-byte header", hlen))
	}
	if h.Major == 1 && h.parseCanonical(text) {
		h.DataOffset += hlen
		return h, nil
	}
	text = append([]byte(nil), text...) // the general parser's values keep it
	if h.Major == 3 && utf8.RuneCount(text) > o.maxHeader() {
		return nil, &ndarray.Error{Pkg: "npybridge", Err: errHeaderTooLarge, Offset: 8, Option: "ReadOptions.MaxHeaderSize",
			Detail: fmt.Sprintf("header of %d characters exceeds the limit of %d", utf8.RuneCount(text), o.maxHeader())}
	}
	if err := h.parse(text, o.AllowObjects, objects); err != nil {
		return nil, err
	}
	h.DataOffset += hlen
	return h, nil
}

// notNPY is the ErrNotNPY of an input that starts with pre, which says
// so when it is a zip archive, as an .npz is, and names npzCall, the call
// that reads one, if it is not "".
func notNPY(pre []byte, npzCall string) error {
	detail := fmt.Sprintf("the file starts with %q, not the magic \\x93NUMPY", pre)
	if bytes.HasPrefix(pre, []byte("PK\x03\x04")) || bytes.HasPrefix(pre, []byte("PK\x05\x06")) {
		detail += ": it is a zip archive, as an .npz is"
		if npzCall != "" {
			detail += "; " + npzCall + " reads one"
		}
	}
	return &ndarray.Error{Pkg: "npybridge", Err: ErrNotNPY, Offset: 0, Detail: detail}
}

func truncated(err error, at int64, what string) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errAt(ndarray.ErrTruncated, at, "the file ends inside %s", what)
	}
	return err
}

// parse interprets the header text; h.DataOffset is the text's offset. An
// object array's header is accepted when objects is set, and otherwise
// refused saying how it can be read (allow: AllowObjects is set).
func (h *Header) parse(text []byte, allow, objects bool) error {
	base := h.DataOffset
	if h.Major == 3 {
		if !utf8.Valid(text) {
			return errAt(errHeader, base, "a version 3.0 header must be UTF-8")
		}
	}
	// Versions 1.0 and 2.0 are latin-1: bytes above 0x7f can only appear
	// inside strings (field names), which the parser turns into UTF-8.
	v, serr := parsePyLiteral(text, h.Major < 3)
	if serr != nil {
		return errAt(errHeader, base+int64(serr.at), "%s in header %s", serr.msg, quoteHeader(text))
	}
	bad := func(at int, format string, args ...any) error {
		return errAt(errHeader, base+int64(at), format, args...)
	}
	if v.kind != pyDict {
		return bad(v.at, "the header is %s, not a dict: %s", v.kind, quoteHeader(text))
	}
	var descr, fortran, shape *pyValue
	for i := 0; i < len(v.items); i += 2 {
		k, val := v.items[i], &v.items[i+1]
		if k.kind != pyStr {
			return bad(k.at, "a header key is %s, not a str", k.kind)
		}
		var slot **pyValue
		switch k.s {
		case "descr":
			slot = &descr
		case "fortran_order":
			slot = &fortran
		case "shape":
			slot = &shape
		default:
			return bad(k.at, "unexpected key %q: the header must have exactly descr, fortran_order and shape", k.s)
		}
		if *slot != nil {
			return bad(k.at, "duplicate key %q", k.s)
		}
		*slot = val
	}
	for name, val := range map[string]*pyValue{"descr": descr, "fortran_order": fortran, "shape": shape} {
		if val == nil {
			return bad(v.at, "missing key %q: the header must have exactly descr, fortran_order and shape", name)
		}
	}

	if fortran.kind != pyBool {
		return bad(fortran.at, "fortran_order is %s, not True or False", fortran.kind)
	}
	h.FortranOrder = fortran.b

	if shape.kind != pyTuple {
		return bad(shape.at, "shape is %s, not a tuple", shape.kind)
	}
	h.Shape = make([]int, len(shape.items))
	for i, d := range shape.items {
		switch {
		case d.kind != pyInt:
			return bad(d.at, "dimension %d of shape is %s, not an int", i, d.kind)
		case d.negative && d.i != 0:
			return wrapAt(errHeader, base+int64(d.at), &ndarray.Error{Pkg: "ndarray", Offset: -1, Err: ndarray.ErrShape, Detail: fmt.Sprintf("dimension %d of shape is negative", i)})
		case d.big || d.i > int64(maxInt):
			return wrapAt(errHeader, base+int64(d.at), &ndarray.Error{Pkg: "ndarray", Offset: -1, Err: ndarray.ErrShape, Detail: fmt.Sprintf("dimension %d of shape overflows int", i)})
		}
		h.Shape[i] = int(d.i)
	}

	if descr.kind == pyStr && isPlainObjectDescr(descr.s) {
		if !objects {
			return objectRefusal(base+int64(descr.at), descr.s, allow)
		}
		h.objects = true
		return nil
	}
	switch descr.kind {
	case pyStr, pyList, pyDict, pyTuple:
	default:
		return bad(descr.at, "descr is %s, not a str or a list of fields", descr.kind)
	}
	dt, err := descrParser{base: base}.dtype(descr)
	if err != nil {
		return err
	}
	if dt.IsSubarray() {
		// np.load reads the subarray's elements and cannot give them the
		// header's shape; it reads nothing it could be given.
		return bad(descr.at, "descr is the subarray dtype %s, which np.load cannot shape into an array", dt)
	}
	h.DType = dt
	if _, err := ndarray.ByteSize(dt, h.Shape); err != nil {
		return wrapAt(errHeader, base+int64(shape.at), err)
	}
	return nil
}

const maxInt = int(^uint(0) >> 1)

// quoteHeader quotes header text for an error message, cut to a readable
// length.
func quoteHeader(text []byte) string {
	const max = 120
	t := bytes.TrimRight(text, " \n")
	if len(t) > max {
		return strconv.Quote(string(t[:max])) + "..."
	}
	return strconv.Quote(string(t))
}

// growthAxisDigits is numpy's GROWTH_AXIS_MAX_DIGITS: room left in the
// header so that the growing axis can be rewritten in place.
const growthAxisDigits = 21

// arrayAlign is numpy's ARRAY_ALIGN: data starts on a multiple of it.
const arrayAlign = 64

// AppendHeader appends the NPY header (magic, version, length, padded text)
// that np.save writes for a C-order array of dtype dt and the given shape:
// the descr is dt's typestr, or a record's dtype.descr list. Like numpy it
// picks version 1.0, or 2.0 when the header does not fit in 1.0's 16-bit
// length, or 3.0 when a field name or title is not latin-1.
//
// np.save refuses a record whose fields overlap or are out of offset
// order, and an array of a subarray dtype; Write and the other writers
// refuse them too. AppendHeader, which cannot fail, gives such a dtype
// numpy's dict form, which np.load and Read refuse, never a bare "|Vn".
func AppendHeader(dst []byte, dt ndarray.DType, shape []int) []byte {
	return appendHeader(dst, appendDescr(nil, dt), shape)
}

// appendHeader is AppendHeader for the descr literal given.
func appendHeader(dst, descr []byte, shape []int) []byte {
	var text []byte
	text = append(text, "{'descr': "...)
	text = append(text, descr...)
	text = append(text, ", 'fortran_order': False, 'shape': "...)
	text = append(text, ndarray.FormatShape(shape)...)
	text = append(text, ", }"...)
	if len(shape) > 0 {
		for n := growthAxisDigits - len(strconv.Itoa(shape[0])); n > 0; n-- {
			text = append(text, ' ')
		}
	}
	major := byte(1)
	if latin1, ok := toLatin1(text); ok {
		text = latin1
	} else {
		major = 3 // UTF-8, as the text already is
	}
	hlen := len(text) + 1 // the newline
	prefix := 10
	pad := arrayAlign - (prefix+hlen)%arrayAlign
	if major == 3 || hlen+pad > 0xffff {
		prefix = 12 // versions 2.0 and 3.0: a 4-byte length
		pad = arrayAlign - (prefix+hlen)%arrayAlign
		major = max(major, 2)
	}
	dst = append(dst, Magic...)
	dst = append(dst, major, 0)
	if prefix == 10 {
		dst = binary.LittleEndian.AppendUint16(dst, uint16(hlen+pad))
	} else {
		dst = binary.LittleEndian.AppendUint32(dst, uint32(hlen+pad))
	}
	dst = append(dst, text...)
	for ; pad > 0; pad-- {
		dst = append(dst, ' ')
	}
	return append(dst, '\n')
}

// toLatin1 returns the UTF-8 text in latin-1, or false if it holds a
// character beyond U+00FF. ASCII text, every header without a non-ASCII
// field name, is returned as it is.
func toLatin1(text []byte) ([]byte, bool) {
	ascii := true
	for _, c := range text {
		ascii = ascii && c < utf8.RuneSelf
	}
	if ascii {
		return text, true
	}
	out := make([]byte, 0, len(text))
	for _, r := range string(text) {
		if r > 0xff {
			return nil, false
		}
		out = append(out, byte(r))
	}
	return out, true
}
