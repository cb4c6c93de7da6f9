package pickle

import (
	"encoding/binary"
	"math"
	"math/big"
	"unicode/utf8"
	"unsafe"

	"github.com/ndpack/ndpack/internal/codecerr"
)

// Defaults of Options.
const (
	// DefaultMaxDepth bounds nesting as Python's default recursion limit
	// does: deeper data could not be loaded or printed by Python either.
	DefaultMaxDepth = 1000
	// DefaultAllocFactor and DefaultAllocSlack make the default allocation
	// limit, DefaultAllocFactor times the input plus DefaultAllocSlack:
	// the densest legitimate stream, an object array of None (one byte
	// each, an interface of 16 bytes in the result), needs 16 times.
	DefaultAllocFactor = 24
	DefaultAllocSlack  = 1 << 20
	// DefaultMaxStack bounds the stack and the marks: Python's pickler
	// never has more than a batch of 1000 items and a few entries per
	// level of nesting on it.
	DefaultMaxStack = 1 << 16
	// DefaultSizeFactor and DefaultSizeSlack make the default limit on
	// the size of the result written out (Options.MaxSize): a stream
	// without shared values is about as large as what it holds.
	DefaultSizeFactor = 16
	DefaultSizeSlack  = 64 << 20
)

// Py2Strings says how Python 2 str values (the STRING, BINSTRING and
// SHORT_BINSTRING opcodes) are decoded, as np.load's encoding argument
// does. Data of numeric arrays is always taken as raw bytes.
type Py2Strings int

const (
	// ASCII decodes them as ASCII and refuses other bytes, as np.load does
	// by default.
	ASCII Py2Strings = iota
	// Latin1 decodes them as latin-1, as np.load(encoding='latin1').
	Latin1
	// Bytes returns them as []byte, as np.load(encoding='bytes').
	Bytes
)

// Options controls Decode. The zero value is the default.
type Options struct {
	// MaxDepth bounds the nesting of containers in the result; 0 means
	// DefaultMaxDepth.
	MaxDepth int
	// MaxAlloc bounds, in bytes, the memory the decoded values take; 0
	// means DefaultAllocFactor times the input plus DefaultAllocSlack.
	MaxAlloc int64
	// MaxSize bounds, in bytes, the size of the result written out
	// (about its size as msgpack: a str or bytes its length plus 5, a
	// number 9, a container 5 plus its items, a numeric array its data
	// plus 64), each shared value counted once for every place it appears
	// (a memo bomb shares one list or one long str in many places); 0
	// means DefaultSizeFactor times the input plus DefaultSizeSlack.
	MaxSize int64
	// MaxStack bounds the entries on the stack, and the marks; 0 means
	// DefaultMaxStack.
	MaxStack int
	// Strings says how Python 2 str values decode.
	Strings Py2Strings
	// ObjectArray, if set, makes the value of a numpy object array from its
	// shape and its elements in row-major order; nil makes an
	// *ObjectArray.
	ObjectArray func(shape []int, values []any) any
}

// Tuple is a Python tuple.
type Tuple []any

// Dict is a Python dict: its items in the order the pickle gave them
// (Python's iteration order). Keys may be of any type, tuples included,
// which is why it is not a Go map.
type Dict []DictItem

// DictItem is one key and its value.
type DictItem struct {
	Key, Value any
}

// Get returns the value of the last item whose key == key, as a Python
// dict keeps the last of equal keys; only comparable keys (strings,
// numbers, nil, bools) can be looked up.
func (d Dict) Get(key any) (any, bool) {
	for i := len(d) - 1; i >= 0; i-- {
		if comparableEqual(d[i].Key, key) {
			return d[i].Value, true
		}
	}
	return nil, false
}

func comparableEqual(a, b any) bool {
	switch a.(type) {
	case nil, bool, int64, float64, complex128, string:
		return a == b
	}
	return false
}

// Set is a Python set or frozenset: its elements in the pickle's order.
type Set []any

// ObjectArray is a numpy object array when Options.ObjectArray is not set:
// its shape and its elements in row-major order.
type ObjectArray struct {
	Shape  []int
	Values []any
}

// Decode reads one pickle from data, up to its STOP opcode (bytes after
// it are ignored, as pickle.load ignores them), and returns its value. The
// result shares memory with data (its strings, bytes and arrays are views
// of it), so data must never change afterwards.
func Decode(data []byte, opts Options) (any, error) {
	v, _, err := DecodePrefix(data, opts)
	return v, err
}

// DecodePrefix is Decode that also returns the bytes the pickle took,
// through its STOP opcode.
func DecodePrefix(data []byte, opts Options) (any, int, error) {
	d := &decoder{data: data, opts: opts}
	if d.opts.MaxDepth <= 0 {
		d.opts.MaxDepth = DefaultMaxDepth
	}
	if d.opts.MaxAlloc <= 0 {
		d.opts.MaxAlloc = DefaultAllocFactor*int64(len(data)) + DefaultAllocSlack
	}
	if d.opts.MaxSize <= 0 {
		d.opts.MaxSize = DefaultSizeFactor*int64(len(data)) + DefaultSizeSlack
	}
	if d.opts.MaxStack <= 0 {
		d.opts.MaxStack = DefaultMaxStack
	}
	d.budget = d.opts.MaxAlloc
	top, err := d.run()
	if err != nil {
		return nil, 0, err
	}
	f := freezer{d: d}
	v, _, err := f.freeze(top, 0, d.stopAt)
	if err != nil {
		return nil, 0, err
	}
	return v, d.pos, nil
}

// The opcodes of protocols 0 to 5.
const (
	opMark           = '('
	opStop           = '.'
	opPop            = '0'
	opPopMark        = '1'
	opDup            = '2'
	opFloat          = 'F'
	opInt            = 'I'
	opBinInt         = 'J'
	opBinInt1        = 'K'
	opLong           = 'L'
	opBinInt2        = 'M'
	opNone           = 'N'
	opPersID         = 'P'
	opBinPersID      = 'Q'
	opReduce         = 'R'
	opString         = 'S'
	opBinString      = 'T'
	opShortBinString = 'U'
	opUnicode        = 'V'
	opBinUnicode     = 'X'
	opAppend         = 'a'
	opBuild          = 'b'
	opGlobal         = 'c'
	opDict           = 'd'
	opEmptyDict      = '}'
	opAppends        = 'e'
	opGet            = 'g'
	opBinGet         = 'h'
	opInst           = 'i'
	opLongBinGet     = 'j'
	opList           = 'l'
	opEmptyList      = ']'
	opObj            = 'o'
	opPut            = 'p'
	opBinPut         = 'q'
	opLongBinPut     = 'r'
	opSetItem        = 's'
	opTuple          = 't'
	opEmptyTuple     = ')'
	opSetItems       = 'u'
	opBinFloat       = 'G'
	opProto          = 0x80
	opNewObj         = 0x81
	opExt1           = 0x82
	opExt2           = 0x83
	opExt4           = 0x84
	opTuple1         = 0x85
	opTuple2         = 0x86
	opTuple3         = 0x87
	opNewTrue        = 0x88
	opNewFalse       = 0x89
	opLong1          = 0x8a
	opLong4          = 0x8b
	opBinBytes       = 'B'
	opShortBinBytes  = 'C'
	opShortBinUni    = 0x8c
	opBinUnicode8    = 0x8d
	opBinBytes8      = 0x8e
	opEmptySet       = 0x8f
	opAddItems       = 0x90
	opFrozenSet      = 0x91
	opNewObjEx       = 0x92
	opStackGlobal    = 0x93
	opMemoize        = 0x94
	opFrame          = 0x95
	opByteArray8     = 0x96
	opNextBuffer     = 0x97
	opReadonlyBuffer = 0x98
)

var opNames = map[byte]string{
	opFloat: "FLOAT", opInt: "INT", opLong: "LONG", opString: "STRING", opUnicode: "UNICODE",
	opGet: "GET", opPut: "PUT", opDict: "DICT", opList: "LIST", opInst: "INST", opObj: "OBJ",
	opPersID: "PERSID", opBinPersID: "BINPERSID", opNewObj: "NEWOBJ", opNewObjEx: "NEWOBJ_EX",
	opExt1: "EXT1", opExt2: "EXT2", opExt4: "EXT4", opNextBuffer: "NEXT_BUFFER",
	opReadonlyBuffer: "READONLY_BUFFER", opReduce: "REDUCE", opBuild: "BUILD",
}

// Values that live only while decoding; freeze turns them into results or
// refuses them.
type (
	// py2str is a Python 2 str: bytes whose meaning (text or data) is
	// known only where they are used.
	py2str string
	// listObj, dictObj and setObj are mutable while the stream runs, and
	// shared by reference through the memo, as Python's objects are.
	listObj struct {
		node
		items []any   // the last items appended
		full  [][]any // chunks before them, when the list grew long
		n     int     // all the items
	}
	dictObj struct {
		node
		items []DictItem
	}
	setObj struct {
		node
		items  []any
		frozen bool
	}
	tupleObj struct {
		node
		items      []any
		unhashable bool // it holds a list, dict, set or array
	}
	// globalObj is a global the stream named, one of the allowed
	// functions and classes; it is never a value of the result.
	globalObj struct {
		module, name string
		fn           fnKind
	}
)

// node is what freeze keeps of each container: where it began, whether it
// is being or has been frozen, and its result.
type node struct {
	at    int
	state uint8 // 0 new, 1 being frozen, 2 frozen
	value any
	size  int64 // the size written out, shared values counted at each place
}

type decoder struct {
	data    []byte
	pos     int
	opts    Options
	budget  int64
	proto   int
	stack   []any
	marks   []int
	memo    memo
	sparse  map[uint32]any // memo entries put out of order
	stopAt  int
	opStart int
}

func (d *decoder) charge(n int64) error {
	d.budget -= n
	if d.budget < 0 {
		e := errAt(ErrTooLarge, d.opStart, "the values would take more than %d bytes", d.opts.MaxAlloc)
		e.Option = "Options.MaxAlloc"
		return e
	}
	return nil
}

func (d *decoder) fail(class error, format string, args ...any) error {
	return errAt(class, d.opStart, format, args...)
}

func (d *decoder) need(n int, what string) ([]byte, error) {
	if n < 0 || n > len(d.data)-d.pos {
		return nil, d.fail(ErrTruncated, "%s claims %d bytes, %d remain", what, n, len(d.data)-d.pos)
	}
	b := d.data[d.pos : d.pos+n]
	d.pos += n
	return b, nil
}

// text returns the n bytes before pos as a string that shares data's
// memory, as Decode's contract (data must not change afterwards) allows:
// a million strings then cost no copy of their bytes.
func (d *decoder) text(n int) string {
	if n == 0 {
		return ""
	}
	return unsafe.String(&d.data[d.pos-n], n)
}

func (d *decoder) line(what string) (string, error) {
	for i := d.pos; i < len(d.data); i++ {
		if d.data[i] == '\n' {
			s := string(d.data[d.pos:i])
			d.pos = i + 1
			return s, nil
		}
	}
	return "", d.fail(ErrTruncated, "%s has no end of line", what)
}

func (d *decoder) push(v any) { d.stack = append(d.stack, v) }

func (d *decoder) checkStack() error {
	if len(d.stack) > d.opts.MaxStack || len(d.marks) > d.opts.MaxStack {
		return d.fail(ErrTooLarge, "more than %d entries on the stack or marks (Options.MaxStack)", d.opts.MaxStack)
	}
	return nil
}

func (d *decoder) pop(op string) (any, error) {
	if len(d.stack) == 0 || (len(d.marks) > 0 && len(d.stack) <= d.marks[len(d.marks)-1]) {
		return nil, d.fail(ErrMalformed, "%s on an empty stack", op)
	}
	v := d.stack[len(d.stack)-1]
	d.stack = d.stack[:len(d.stack)-1]
	return v, nil
}

func (d *decoder) top(op string) (any, error) {
	if len(d.stack) == 0 || (len(d.marks) > 0 && len(d.stack) <= d.marks[len(d.marks)-1]) {
		return nil, d.fail(ErrMalformed, "%s on an empty stack", op)
	}
	return d.stack[len(d.stack)-1], nil
}

// popMark returns the items above the last mark and removes them and the
// mark. The slice aliases the stack until the next push.
func (d *decoder) popMark(op string) ([]any, error) {
	if len(d.marks) == 0 {
		return nil, d.fail(ErrMalformed, "%s without a MARK", op)
	}
	m := d.marks[len(d.marks)-1]
	d.marks = d.marks[:len(d.marks)-1]
	items := d.stack[m:]
	d.stack = d.stack[:m]
	return items, nil
}

func (d *decoder) memoPut(idx uint32) error {
	v, err := d.top("PUT")
	if err != nil {
		return err
	}
	switch {
	case int64(idx) < int64(d.memo.len()):
		d.memo.set(int(idx), v)
	case int64(idx) == int64(d.memo.len()):
		if err := d.charge(16); err != nil {
			return err
		}
		d.memo.add(v)
	default:
		if d.sparse == nil {
			d.sparse = map[uint32]any{}
		}
		if _, ok := d.sparse[idx]; !ok {
			if err := d.charge(64); err != nil {
				return err
			}
		}
		d.sparse[idx] = v
	}
	return nil
}

func (d *decoder) memoGet(idx uint32) error {
	if int64(idx) < int64(d.memo.len()) {
		d.push(d.memo.get(int(idx)))
		return nil
	}
	if v, ok := d.sparse[idx]; ok {
		d.push(v)
		return nil
	}
	return d.fail(ErrMalformed, "memo entry %d was never put", idx)
}

// memo holds the memo's entries in chunks, so that growing it never copies
// what it holds: a stream of MEMOIZE opcodes allocates what it keeps and no
// more.
type memo struct {
	chunks [][]any
	n      int
}

const memoChunk = 4096

func (m *memo) len() int         { return m.n }
func (m *memo) get(i int) any    { return m.chunks[i/memoChunk][i%memoChunk] }
func (m *memo) set(i int, v any) { m.chunks[i/memoChunk][i%memoChunk] = v }
func (m *memo) add(v any) {
	if m.n%memoChunk == 0 {
		size := memoChunk
		if m.n == 0 {
			size = 64 // most pickles memoize a few dozen objects
		}
		m.chunks = append(m.chunks, make([]any, 0, size))
	}
	c := &m.chunks[len(m.chunks)-1]
	if len(*c) == cap(*c) {
		*c = append(make([]any, 0, memoChunk), *c...)
	}
	*c = append(*c, v)
	m.n++
}

func (d *decoder) run() (any, error) {
	for {
		d.opStart = d.pos
		if d.pos >= len(d.data) {
			return nil, d.fail(ErrTruncated, "the pickle ends without STOP")
		}
		op := d.data[d.pos]
		d.pos++
		if op == opStop {
			v, err := d.pop("STOP")
			if err != nil {
				return nil, err
			}
			// Python ignores what is left on the stack, and so does this.
			d.stopAt = d.opStart
			return v, nil
		}
		if err := d.stepValue(op); err != nil {
			return nil, err
		}
		if err := d.checkStack(); err != nil {
			return nil, err
		}
	}
}

// stepValue runs one opcode of the stack machine and its scalar values
// (numbers, strings, bytes), handing the others on.
func (d *decoder) stepValue(op byte) error {
	var err error
	switch op {
	case opProto:
		b, err := d.need(1, "PROTO")
		if err != nil {
			return err
		}
		if b[0] > 5 {
			return d.fail(ErrMalformed, "protocol %d; Python's highest is 5", b[0])
		}
		d.proto = int(b[0])
	case opFrame:
		b, err := d.need(8, "FRAME")
		if err != nil {
			return err
		}
		if n := binary.LittleEndian.Uint64(b); n > uint64(len(d.data)-d.pos) {
			return d.fail(ErrTruncated, "FRAME claims %d bytes, %d remain", n, len(d.data)-d.pos)
		}
	case opMark:
		d.marks = append(d.marks, len(d.stack))
	case opPop:
		_, err = d.pop("POP")
	case opPopMark:
		_, err = d.popMark("POP_MARK")
	case opDup:
		var v any
		if v, err = d.top("DUP"); err == nil {
			d.push(v)
		}
	case opNone:
		d.push(nil)
	case opNewTrue:
		d.push(true)
	case opNewFalse:
		d.push(false)
	case opBinInt1:
		var b []byte
		if b, err = d.need(1, "BININT1"); err == nil {
			d.push(int64(b[0]))
		}
	case opBinInt2:
		var b []byte
		if b, err = d.need(2, "BININT2"); err == nil {
			d.push(int64(binary.LittleEndian.Uint16(b)))
		}
	case opBinInt:
		var b []byte
		if b, err = d.need(4, "BININT"); err == nil {
			d.push(int64(int32(binary.LittleEndian.Uint32(b))))
		}
	case opLong1:
		var b []byte
		if b, err = d.need(1, "LONG1"); err == nil {
			err = d.long(int(b[0]))
		}
	case opLong4:
		var b []byte
		if b, err = d.need(4, "LONG4"); err == nil {
			n := int32(binary.LittleEndian.Uint32(b))
			if n < 0 {
				return d.fail(ErrMalformed, "LONG4 of negative length %d", n)
			}
			err = d.long(int(n))
		}
	case opBinFloat:
		var b []byte
		if b, err = d.need(8, "BINFLOAT"); err == nil {
			d.push(math.Float64frombits(binary.BigEndian.Uint64(b)))
		}
	case opShortBinUni:
		err = d.unicode(1)
	case opBinUnicode:
		err = d.unicode(4)
	case opBinUnicode8:
		err = d.unicode(8)
	case opShortBinBytes:
		err = d.bytes(1, false)
	case opBinBytes:
		err = d.bytes(4, false)
	case opBinBytes8:
		err = d.bytes(8, false)
	case opByteArray8:
		err = d.bytes(8, true)
	case opShortBinString:
		err = d.py2String(1)
	case opBinString:
		err = d.py2String(4)
	default:
		return d.stepContainer(op)
	}
	return err
}

// stepContainer runs an opcode that makes or fills a list, tuple, dict
// or set.
func (d *decoder) stepContainer(op byte) error {
	var err error
	switch op {
	case opEmptyList:
		err = d.container(&listObj{node: node{at: d.opStart}})
	case opEmptyDict:
		err = d.container(&dictObj{node: node{at: d.opStart}})
	case opEmptySet:
		err = d.container(&setObj{node: node{at: d.opStart}})
	case opEmptyTuple:
		err = d.container(&tupleObj{node: node{at: d.opStart}})
	case opList:
		var items []any
		if items, err = d.popMark("LIST"); err == nil {
			err = d.container(&listObj{node: node{at: d.opStart}, items: d.copyItems(items), n: len(items)})
		}
	case opTuple:
		var items []any
		if items, err = d.popMark("TUPLE"); err == nil {
			err = d.container(&tupleObj{node: node{at: d.opStart}, items: d.copyItems(items)})
		}
	case opFrozenSet:
		var items []any
		if items, err = d.popMark("FROZENSET"); err == nil {
			err = d.container(&setObj{node: node{at: d.opStart}, items: d.copyItems(items), frozen: true})
		}
	case opDict:
		var items []any
		if items, err = d.popMark("DICT"); err == nil {
			dict := &dictObj{node: node{at: d.opStart}}
			if err = d.setItems(dict, items, "DICT"); err == nil {
				err = d.container(dict)
			}
		}
	case opTuple1, opTuple2, opTuple3:
		n := int(op-opTuple1) + 1
		if len(d.stack) < n || (len(d.marks) > 0 && len(d.stack)-n < d.marks[len(d.marks)-1]) {
			return d.fail(ErrMalformed, "TUPLE%d needs %s on the stack", n, codecerr.Count(n, "item"))
		}
		items := d.copyItems(d.stack[len(d.stack)-n:])
		d.stack = d.stack[:len(d.stack)-n]
		err = d.container(&tupleObj{node: node{at: d.opStart}, items: items})
	case opAppend:
		var v, l any
		if v, err = d.pop("APPEND"); err == nil {
			if l, err = d.top("APPEND"); err == nil {
				err = d.appendItems(l, []any{v}, "APPEND")
			}
		}
	case opAppends:
		var items []any
		var l any
		if items, err = d.popMark("APPENDS"); err == nil {
			if l, err = d.top("APPENDS"); err == nil {
				err = d.appendItems(l, items, "APPENDS")
			}
		}
	case opAddItems:
		var items []any
		var s any
		if items, err = d.popMark("ADDITEMS"); err == nil {
			if s, err = d.top("ADDITEMS"); err == nil {
				set, ok := s.(*setObj)
				if !ok || set.frozen {
					return d.fail(ErrMalformed, "ADDITEMS to %s, not a set", typeName(s))
				}
				if err = d.hashables(items, "a set element"); err == nil {
					if err = d.charge(16 * int64(len(items))); err == nil {
						set.items = append(set.items, items...)
					}
				}
			}
		}
	case opSetItem:
		var k, v, t any
		if v, err = d.pop("SETITEM"); err == nil {
			if k, err = d.pop("SETITEM"); err == nil {
				if t, err = d.top("SETITEM"); err == nil {
					err = d.setItems(t, []any{k, v}, "SETITEM")
				}
			}
		}
	case opSetItems:
		var items []any
		var t any
		if items, err = d.popMark("SETITEMS"); err == nil {
			if t, err = d.top("SETITEMS"); err == nil {
				err = d.setItems(t, items, "SETITEMS")
			}
		}
	default:
		return d.stepMemoOrCode(op)
	}
	return err
}

// stepMemoOrCode runs the memo's opcodes and those that name code
// (globals, REDUCE, BUILD), which are read as data or refused.
func (d *decoder) stepMemoOrCode(op byte) error {
	var err error
	switch op {
	case opBinPut:
		var b []byte
		if b, err = d.need(1, "BINPUT"); err == nil {
			err = d.memoPut(uint32(b[0]))
		}
	case opLongBinPut:
		var b []byte
		if b, err = d.need(4, "LONG_BINPUT"); err == nil {
			err = d.memoPut(binary.LittleEndian.Uint32(b))
		}
	case opMemoize:
		if d.memo.len() >= math.MaxUint32 {
			return d.fail(ErrTooLarge, "MEMOIZE beyond 2**32 entries")
		}
		err = d.memoPut(uint32(d.memo.len()))
	case opBinGet:
		var b []byte
		if b, err = d.need(1, "BINGET"); err == nil {
			err = d.memoGet(uint32(b[0]))
		}
	case opLongBinGet:
		var b []byte
		if b, err = d.need(4, "LONG_BINGET"); err == nil {
			err = d.memoGet(binary.LittleEndian.Uint32(b))
		}
	case opGlobal:
		var mod, name string
		if mod, err = d.line("GLOBAL's module"); err == nil {
			if name, err = d.line("GLOBAL's name"); err == nil {
				err = d.global(mod, name)
			}
		}
	case opStackGlobal:
		var mod, name any
		if name, err = d.pop("STACK_GLOBAL"); err == nil {
			if mod, err = d.pop("STACK_GLOBAL"); err == nil {
				ms, ok1 := mod.(string)
				ns, ok2 := name.(string)
				if !ok1 || !ok2 {
					return d.fail(ErrMalformed, "STACK_GLOBAL of %s and %s, not two str", typeName(mod), typeName(name))
				}
				err = d.global(ms, ns)
			}
		}
	case opReduce:
		var f, args any
		if args, err = d.pop("REDUCE"); err == nil {
			if f, err = d.pop("REDUCE"); err == nil {
				var v any
				if v, err = d.reduce(f, args); err == nil {
					d.push(v)
				}
			}
		}
	case opBuild:
		var state, obj any
		if state, err = d.pop("BUILD"); err == nil {
			if obj, err = d.top("BUILD"); err == nil {
				err = d.build(obj, state)
			}
		}
	default:
		if name, ok := opNames[op]; ok {
			switch op {
			case opFloat, opInt, opLong, opString, opUnicode, opGet, opPut, opDict, opList:
				return d.fail(ErrMalformed, "opcode %s of protocol 0, which np.save never writes, is not read", name)
			}
			return d.fail(ErrNotData, "opcode %s would run code or needs a Python object, and is never run", name)
		}
		return d.fail(ErrMalformed, "unknown opcode 0x%02x", op)
	}
	return err
}

// copyItems copies stack items into a container's own slice.
func (d *decoder) copyItems(items []any) []any {
	if len(items) == 0 {
		return nil
	}
	return append(make([]any, 0, len(items)), items...)
}

func (d *decoder) container(v any) error {
	var n int
	switch c := v.(type) {
	case *listObj:
		n = len(c.items)
	case *tupleObj:
		n = len(c.items)
		for _, x := range c.items {
			if !hashable(x) {
				c.unhashable = true
				break
			}
		}
	case *setObj:
		n = len(c.items)
		if err := d.hashables(c.items, "a set element"); err != nil {
			return err
		}
	case *dictObj:
		n = 2 * len(c.items)
	}
	if err := d.charge(64 + 16*int64(n)); err != nil {
		return err
	}
	d.push(v)
	return nil
}

func (d *decoder) appendItems(l any, items []any, op string) error {
	list, ok := l.(*listObj)
	if !ok {
		return d.fail(ErrMalformed, "%s to %s, not a list", op, typeName(l))
	}
	if err := d.charge(16 * int64(len(items))); err != nil {
		return err
	}
	list.add(items)
	return nil
}

func (d *decoder) setItems(t any, items []any, op string) error {
	dict, ok := t.(*dictObj)
	if !ok {
		return d.fail(ErrMalformed, "%s to %s, not a dict", op, typeName(t))
	}
	if len(items)%2 != 0 {
		return d.fail(ErrMalformed, "%s of an odd number of items (%d)", op, len(items))
	}
	if err := d.charge(16 * int64(len(items))); err != nil {
		return err
	}
	for i := 0; i < len(items); i += 2 {
		if !hashable(items[i]) {
			return d.unhashable(items[i], "a dict key")
		}
	}
	for i := 0; i < len(items); i += 2 {
		dict.items = append(dict.items, DictItem{items[i], items[i+1]})
	}
	return nil
}

// hashable reports whether Python could hash v, as a dict key or a set
// element must be: not a list, dict, set, array, or a tuple holding one.
// (A tuple's answer is found once, when it is made.)
func hashable(v any) bool {
	switch o := v.(type) {
	case *listObj, *dictObj, *arrayObj:
		return false
	case *setObj:
		return o.frozen
	case *tupleObj:
		return !o.unhashable
	}
	return true
}

// hashables refuses the first of items that is not hashable.
func (d *decoder) hashables(items []any, what string) error {
	for _, x := range items {
		if !hashable(x) {
			return d.unhashable(x, what)
		}
	}
	return nil
}

// unhashable is the error for a dict key or set element Python could not
// hash: Python's pickle.load fails there ("unhashable type").
func (d *decoder) unhashable(v any, what string) error {
	t := typeName(v)
	if tu, ok := v.(*tupleObj); ok && tu.unhashable {
		t = "a tuple holding a list, dict, set or array"
	}
	return d.fail(ErrMalformed, "%s is %s, which Python cannot hash (unhashable type): it refuses this pickle", what, t)
}

// listChunk is the size past which a list grows in chunks rather than by
// copying: a list of ten million items then allocates its items twice
// (chunks, then the result) rather than five times over as append grows
// it.
const listChunk = 1 << 14

func (l *listObj) add(items []any) {
	l.n += len(items)
	for len(items) > 0 {
		if len(l.items) == cap(l.items) && cap(l.items) >= listChunk {
			l.full = append(l.full, l.items)
			l.items = make([]any, 0, listChunk)
		}
		room := cap(l.items) - len(l.items)
		if room == 0 {
			l.items = append(l.items, items[0])
			items = items[1:]
			continue
		}
		k := min(room, len(items))
		l.items = append(l.items, items[:k]...)
		items = items[k:]
	}
}

// all returns the items in one slice, joining the chunks once.
func (l *listObj) all() []any {
	if len(l.full) == 0 {
		return l.items
	}
	out := make([]any, 0, l.n)
	for _, c := range l.full {
		out = append(out, c...)
	}
	l.items, l.full = append(out, l.items...), nil
	return l.items
}

// long pushes a LONG1 or LONG4 integer of n little-endian two's complement
// bytes.
func (d *decoder) long(n int) error {
	b, err := d.need(n, "LONG")
	if err != nil {
		return err
	}
	if n <= 8 {
		var u uint64
		for i := n - 1; i >= 0; i-- {
			u = u<<8 | uint64(b[i])
		}
		if n > 0 && n < 8 && b[n-1]&0x80 != 0 {
			u |= ^uint64(0) << (8 * n) // sign-extend
		}
		d.push(int64(u))
		return nil
	}
	if err := d.charge(int64(n) + 32); err != nil {
		return err
	}
	be := make([]byte, n)
	for i := range b {
		be[n-1-i] = b[i]
	}
	x := new(big.Int).SetBytes(be)
	if b[n-1]&0x80 != 0 {
		x.Sub(x, new(big.Int).Lsh(big.NewInt(1), uint(8*n)))
	}
	if x.IsInt64() {
		d.push(x.Int64())
	} else {
		d.push(x)
	}
	return nil
}

func (d *decoder) length(size int, what string) (int, error) {
	b, err := d.need(size, what)
	if err != nil {
		return 0, err
	}
	var n uint64
	switch size {
	case 1:
		n = uint64(b[0])
	case 4:
		n = uint64(binary.LittleEndian.Uint32(b))
	case 8:
		n = binary.LittleEndian.Uint64(b)
	}
	if n > uint64(len(d.data)-d.pos) {
		return 0, d.fail(ErrTruncated, "%s claims %d bytes, %d remain", what, n, len(d.data)-d.pos)
	}
	return int(n), nil
}

func (d *decoder) unicode(size int) error {
	n, err := d.length(size, "a str")
	if err != nil {
		return err
	}
	d.pos += n
	s := d.text(n)
	if !utf8.ValidString(s) {
		return d.fail(ErrMalformed, "a str of %d bytes is not UTF-8 (a lone surrogate is not read)", n)
	}
	if err := d.charge(16); err != nil {
		return err
	}
	d.push(s)
	return nil
}

func (d *decoder) bytes(size int, bytearray bool) error {
	n, err := d.length(size, "a bytes")
	if err != nil {
		return err
	}
	b := d.data[d.pos : d.pos+n : d.pos+n]
	d.pos += n
	if bytearray {
		// A bytearray is mutable: its own copy.
		if err := d.charge(int64(n) + 32); err != nil {
			return err
		}
		b = append([]byte{}, b...)
	} else if err := d.charge(32); err != nil {
		return err
	}
	d.push(b)
	return nil
}

func (d *decoder) py2String(size int) error {
	n, err := d.length(size, "a Python 2 str")
	if err != nil {
		return err
	}
	d.pos += n
	if err := d.charge(32); err != nil {
		return err
	}
	d.push(py2str(d.text(n)))
	return nil
}

// typeName names a value's Python type for errors.
func typeName(v any) string {
	switch v := v.(type) {
	case nil:
		return "None"
	case bool:
		return "a bool"
	case int64, *big.Int:
		return "an int"
	case float64:
		return "a float"
	case complex128:
		return "a complex"
	case string:
		return "a str"
	case py2str:
		return "a Python 2 str"
	case []byte:
		return "a bytes"
	case *listObj:
		return "a list"
	case *tupleObj:
		return "a tuple"
	case *dictObj:
		return "a dict"
	case *setObj:
		return "a set"
	case *globalObj:
		return "the global " + v.module + "." + v.name
	case *arrayObj:
		return "a numpy.ndarray"
	case *dtypeObj:
		return "a numpy.dtype"
	}
	return "a numpy scalar or array"
}
