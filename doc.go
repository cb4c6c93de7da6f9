// Package ndpack combines ndpack's codecs where one piece of data holds
// several of them: a msgpack message whose arrays may be ext 110 objects
// (package ext110, YEP-110) or the maps of the Python services' dialects
// (package dialect: msgpack-numpy, OpenPI), read and written with
// MessageOptions and MessageDecoder, the module's one way to do so;
// conversions between an .npy file (package npybridge, NEP 1) and an ext
// 110 object that stream the data without loading it (ConvertOptions); and
// DetectFormat, which tells which of them an input is.
//
// Each codec package knows only its own format and package ndarray; what
// combines them lives here, above them, so that no codec changes behaviour
// because another was imported. Programs that read one format only can use
// its package directly. ARCHITECTURE.md in the repository maps the layers.
package ndpack
