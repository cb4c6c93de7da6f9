package gr00tpolicy

import (
	"errors"
	"sync"

	"github.com/ndpack/ndpack"
	"github.com/ndpack/ndpack/dialect"
	"github.com/ndpack/ndpack/internal/msgarrays"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/vmihailenco/msgpack/v5"
)

// ordered is a msgpack map whose keys keep their order, as a Python dict
// keeps its insertion order: for the request envelope and the
// dataclasses, which GR00T writes in a fixed order. (A Go map's keys are
// written sorted.)
type ordered []kv

type kv struct {
	k string
	v any
}

// EncodeMsgpack writes o as a map in its order.
func (o ordered) EncodeMsgpack(e *msgpack.Encoder) error {
	if err := e.EncodeMapLen(len(o)); err != nil {
		return err
	}
	for _, p := range o {
		if err := e.EncodeString(p.k); err != nil {
			return err
		}
		if err := e.Encode(p.v); err != nil {
			return err
		}
	}
	return nil
}

// arrays are the arrays a GR00T message holds: GR00T's maps, which
// MsgSerializer's object hook makes arrays wherever they are. An ext 110
// object or another dialect's map is not one: the Python peer would see
// an ExtType or a dict.
var arrays = msgarrays.Of(dialect.GR00T)

// maxExpansion bounds the memory decoding a message may take, as a
// multiple of its size plus expansionSlack, as openpi's server bounds it:
// arrays and byte strings alias the message, so what a robot sends costs
// about its size once more in Go values at most.
const (
	maxExpansion   = 8
	expansionSlack = 1 << 20
)

// encode appends v to dst[:0] as GR00T's MsgSerializer.to_bytes writes
// it: arrays as maps holding the bytes np.save writes, integers in their
// smallest form, a Go map's keys sorted and an ordered map's in its order.
func encode(dst []byte, v any) ([]byte, error) {
	return ndpack.MessageOptions{Encoding: dialect.GR00T}.AppendMessage(dst[:0], v)
}

// buffers recycles the buffers requests and answers are encoded into, once
// sent: a client or a server sending one message after another allocates
// none, and the collector takes back what idles (a sync.Pool's buffers
// last two collections).
var buffers sync.Pool

// maxPooled is the largest buffer kept for reuse: a rare huge message's
// buffer is left to the collector.
const maxPooled = 16 << 20

func getBuffer() *[]byte {
	if b, ok := buffers.Get().(*[]byte); ok {
		return b
	}
	return new([]byte)
}

func putBuffer(b *[]byte) {
	if cap(*b) <= maxPooled {
		buffers.Put(b)
	}
}

// decode decodes one whole message as MsgSerializer.from_bytes does: GR00T's
// array maps become *ndarray.Array aliasing b (read by npybridge's reader:
// object arrays refused, never unpickled), str string, bin []byte, lists
// []any, maps map[string]any, integers int64 (uint64 above its range),
// floats float64 or float32 as sent. The message is walked first, without
// allocating for it: every length within b, nesting within
// msgarrays.MaxDepth, and the memory decoding takes within maxExpansion,
// which charge (when not nil) is asked for before any is allocated.
func decode(b []byte, charge func(int64) error) (any, error) {
	cost, err := arrays.Check(b, maxExpansion, expansionSlack)
	if err != nil {
		return nil, decodeError(err)
	}
	if charge != nil {
		if err := charge(cost); err != nil {
			return nil, err
		}
	}
	v, err := arrays.Decode(b)
	if err != nil {
		return nil, decodeError(err)
	}
	return v, nil
}

// decodeError is a failure of msgarrays' decoder in this package's words.
func decodeError(err error) error {
	var e *msgarrays.Error
	if !errors.As(err, &e) {
		return err
	}
	class := e.Class
	if class == ndarray.ErrMalformed {
		class = errMalformed
	}
	return &msgError{class: class, offset: int64(e.Offset), detail: e.Detail, cause: e.Cause}
}
