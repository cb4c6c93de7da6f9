package yaq

import (
	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/yaq/avro"
)

// The Avro codec moved to package avro, so that the client and daemon read
// as protocol code; its names remain here for the code written against
// them.

// Schema is a parsed Avro schema.
//
// Deprecated: use avro.Schema.
type Schema = avro.Schema

// Field is a record field, or a message's parameter.
//
// Deprecated: use avro.Field.
type Field = avro.Field

// Message is one method of a protocol: its parameters and response.
//
// Deprecated: use avro.Message.
type Message = avro.Message

// Error is a failure of the Avro codec: its class, offset, detail and
// cause. Its message now starts with "avro: ".
//
// Deprecated: use avro.Error.
type Error = avro.Error

// ArrayOptions controls encoding of the ndarray record.
//
// Deprecated: use avro.ArrayOptions.
type ArrayOptions = avro.ArrayOptions

// ArraySchema is the Avro schema of the YEP-113 ndarray record.
//
// Deprecated: use avro.ArraySchema.
const ArraySchema = avro.ArraySchema

// ArrayVersion is the array interface version the record carries.
//
// Deprecated: use avro.ArrayVersion.
const ArrayVersion = avro.ArrayVersion

// The codec's sentinel errors: the very values of package avro, so that
// errors.Is matches either name.
var (
	// Deprecated: use avro.ErrSchema.
	ErrSchema = avro.ErrSchema
	// Deprecated: use avro.ErrTruncated.
	ErrTruncated = avro.ErrTruncated
	// Deprecated: use avro.ErrMalformed.
	ErrMalformed = avro.ErrMalformed
	// Deprecated: use avro.ErrDoesNotFit.
	ErrDoesNotFit = avro.ErrDoesNotFit
	// Deprecated: use avro.ErrNonstandard.
	ErrNonstandard = avro.ErrNonstandard
	// Deprecated: use avro.ErrLimit.
	ErrLimit = avro.ErrLimit
)

// ParseSchema parses one Avro schema from its JSON text.
//
// Deprecated: use avro.ParseSchema.
func ParseSchema(text string) (*Schema, error) { return avro.ParseSchema(text) }

// AppendArray appends the ndarray record of a to dst.
//
// Deprecated: use avro.AppendArray.
func AppendArray(dst []byte, a *ndarray.Array) ([]byte, error) { return avro.AppendArray(dst, a) }

// DecodeArray decodes the ndarray record at the start of b.
//
// Deprecated: use avro.DecodeArray.
func DecodeArray(b []byte) (*ndarray.Array, int, error) { return avro.DecodeArray(b) }
