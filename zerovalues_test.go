package ndpack_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ndpack/ndpack"
	"github.com/ndpack/ndpack/conformance"
	"github.com/ndpack/ndpack/dialect"
	"github.com/ndpack/ndpack/ext110"
	"github.com/ndpack/ndpack/gr00tpolicy"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/npybridge"
	"github.com/ndpack/ndpack/openpi"
	"github.com/ndpack/ndpack/refs"
	"github.com/ndpack/ndpack/remote"
	"github.com/ndpack/ndpack/render"
	"github.com/ndpack/ndpack/yaq"
	"github.com/ndpack/ndpack/yaq/avro"
	"github.com/ndpack/ndpack/yaq/kit"
	"github.com/ndpack/ndpack/yaqrpc"
	"github.com/ndpack/ndpack/zarr"
)

// zeroTypes are the API's named types, by the name the listing gives them.
var zeroTypes = map[string]reflect.Type{
	", type ConvertOptions":             reflect.TypeFor[ndpack.ConvertOptions](),
	", type MessageDecoder":             reflect.TypeFor[ndpack.MessageDecoder](),
	", type MessageOptions":             reflect.TypeFor[ndpack.MessageOptions](),
	", type ResultBuffer":               reflect.TypeFor[ndpack.ResultBuffer](),
	"/conformance, type Codec":          reflect.TypeFor[conformance.Codec](),
	"/dialect, type Dialect":            reflect.TypeFor[dialect.Dialect](),
	"/dialect, type Encoder":            reflect.TypeFor[dialect.Encoder](),
	"/dialect, type Header":             reflect.TypeFor[dialect.Header](),
	"/ext110, type Decoder":             reflect.TypeFor[ext110.Decoder](),
	"/ext110, type Encoder":             reflect.TypeFor[ext110.Encoder](),
	"/ext110, type Header":              reflect.TypeFor[ext110.Header](),
	"/ext110, type Options":             reflect.TypeFor[ext110.Options](),
	"/gr00tpolicy, type ActionConfig":   reflect.TypeFor[gr00tpolicy.ActionConfig](),
	"/gr00tpolicy, type Client":         reflect.TypeFor[gr00tpolicy.Client](),
	"/gr00tpolicy, type DialOptions":    reflect.TypeFor[gr00tpolicy.DialOptions](),
	"/gr00tpolicy, type Handler":        reflect.TypeFor[gr00tpolicy.Handler](),
	"/gr00tpolicy, type ModalityConfig": reflect.TypeFor[gr00tpolicy.ModalityConfig](),
	"/gr00tpolicy, type Server":         reflect.TypeFor[gr00tpolicy.Server](),
	"/gr00tpolicy, type ServerError":    reflect.TypeFor[gr00tpolicy.ServerError](),
	"/ndarray, type Array":              reflect.TypeFor[ndarray.Array](),
	"/ndarray, type Casting":            reflect.TypeFor[ndarray.Casting](),
	"/ndarray, type CastWarnings":       reflect.TypeFor[ndarray.CastWarnings](),
	"/ndarray, type DType":              reflect.TypeFor[ndarray.DType](),
	"/ndarray, type DescrItem":          reflect.TypeFor[ndarray.DescrItem](),
	"/ndarray, type Error":              reflect.TypeFor[ndarray.Error](),
	"/ndarray, type Field":              reflect.TypeFor[ndarray.Field](),
	"/ndarray, type FieldView":          reflect.TypeFor[ndarray.FieldView](),
	"/npybridge, type AppendOptions":    reflect.TypeFor[npybridge.AppendOptions](),
	"/npybridge, type Appender":         reflect.TypeFor[npybridge.Appender](),
	"/npybridge, type Dict":             reflect.TypeFor[npybridge.Dict](),
	"/npybridge, type DictItem":         reflect.TypeFor[npybridge.DictItem](),
	"/npybridge, type Header":           reflect.TypeFor[npybridge.Header](),
	"/npybridge, type MapOptions":       reflect.TypeFor[npybridge.MapOptions](),
	"/npybridge, type Mapped":           reflect.TypeFor[npybridge.Mapped](),
	"/npybridge, type NPZ":              reflect.TypeFor[npybridge.NPZ](),
	"/npybridge, type NPZWriter":        reflect.TypeFor[npybridge.NPZWriter](),
	"/npybridge, type NamedArray":       reflect.TypeFor[npybridge.NamedArray](),
	"/npybridge, type ObjectArray":      reflect.TypeFor[npybridge.ObjectArray](),
	"/npybridge, type ReadOptions":      reflect.TypeFor[npybridge.ReadOptions](),
	"/npybridge, type Set":              reflect.TypeFor[npybridge.Set](),
	"/npybridge, type Tuple":            reflect.TypeFor[npybridge.Tuple](),
	"/openpi, type Client":              reflect.TypeFor[openpi.Client](),
	"/openpi, type DialOptions":         reflect.TypeFor[openpi.DialOptions](),
	"/openpi, type PolicyFunc":          reflect.TypeFor[openpi.PolicyFunc](),
	"/openpi, type ResultBuffer":        reflect.TypeFor[openpi.ResultBuffer](),
	"/openpi, type Server":              reflect.TypeFor[openpi.Server](),
	"/openpi, type ServerError":         reflect.TypeFor[openpi.ServerError](),
	"/refs, type Builder":               reflect.TypeFor[refs.Builder](),
	"/refs, type Options":               reflect.TypeFor[refs.Options](),
	"/refs, type ParseOptions":          reflect.TypeFor[refs.ParseOptions](),
	"/refs, type Ref":                   reflect.TypeFor[refs.Ref](),
	"/refs, type Set":                   reflect.TypeFor[refs.Set](),
	"/refs, type Source":                reflect.TypeFor[refs.Source](),
	"/refs, type Store":                 reflect.TypeFor[refs.Store](),
	"/remote, type Object":              reflect.TypeFor[remote.Object](),
	"/remote, type Options":             reflect.TypeFor[remote.Options](),
	"/remote, type Writer":              reflect.TypeFor[remote.Writer](),
	"/render, type Options":             reflect.TypeFor[render.Options](),
	"/render, type Plot":                reflect.TypeFor[render.Plot](),
	"/render, type Preview":             reflect.TypeFor[render.Preview](),
	"/render, type Source":              reflect.TypeFor[render.Source](),
	"/yaq, type Client":                 reflect.TypeFor[yaq.Client](),
	"/yaq, type Daemon":                 reflect.TypeFor[yaq.Daemon](),
	"/yaq, type DialOptions":            reflect.TypeFor[yaq.DialOptions](),
	"/yaq, type Handler":                reflect.TypeFor[yaq.Handler](),
	"/yaq, type Protocol":               reflect.TypeFor[yaq.Protocol](),
	"/yaq, type RemoteError":            reflect.TypeFor[yaq.RemoteError](),
	"/yaq, type ResultBuffer":           reflect.TypeFor[yaq.ResultBuffer](),
	"/yaq/avro, type ArrayOptions":      reflect.TypeFor[avro.ArrayOptions](),
	"/yaq/avro, type Field":             reflect.TypeFor[avro.Field](),
	"/yaq/avro, type Message":           reflect.TypeFor[avro.Message](),
	"/yaq/avro, type Names":             reflect.TypeFor[avro.Names](),
	"/yaq/avro, type Protocol":          reflect.TypeFor[avro.Protocol](),
	"/yaq/avro, type Scanner":           reflect.TypeFor[avro.Scanner](),
	"/yaq/avro, type Schema":            reflect.TypeFor[avro.Schema](),
	"/yaq/kit, type Composed":           reflect.TypeFor[kit.Composed](),
	"/yaq/kit, type Daemon":             reflect.TypeFor[kit.Daemon](),
	"/yaq/kit, type Positioner":         reflect.TypeFor[kit.Positioner](),
	"/yaq/kit, type Program":            reflect.TypeFor[kit.Program](),
	"/yaq/kit, type Sensor":             reflect.TypeFor[kit.Sensor](),
	"/yaqrpc, type Client":              reflect.TypeFor[yaqrpc.Client](),
	"/yaqrpc, type DialOptions":         reflect.TypeFor[yaqrpc.DialOptions](),
	"/yaqrpc, type Error":               reflect.TypeFor[yaqrpc.Error](),
	"/yaqrpc, type Handler":             reflect.TypeFor[yaqrpc.Handler](),
	"/yaqrpc, type Request":             reflect.TypeFor[yaqrpc.Request](),
	"/yaqrpc, type ResultBuffer":        reflect.TypeFor[yaqrpc.ResultBuffer](),
	"/yaqrpc, type Server":              reflect.TypeFor[yaqrpc.Server](),
	"/zarr, type Array":                 reflect.TypeFor[zarr.Array](),
	"/zarr, type Compressor":            reflect.TypeFor[zarr.Compressor](),
	"/zarr, type Dir":                   reflect.TypeFor[zarr.Dir](),
	"/zarr, type Meta":                  reflect.TypeFor[zarr.Meta](),
	"/zarr, type ReadOptions":           reflect.TypeFor[zarr.ReadOptions](),
	"/zarr, type WriteOptions":          reflect.TypeFor[zarr.WriteOptions](),
	"/zarr, type Writer":                reflect.TypeFor[zarr.Writer](),
}

// notCalled are the methods the zero-value test does not call: they end
// the process by design.
var notCalled = map[string]bool{"kit.Program.Main": true}

// argFor makes an argument of type t that is itself usable, so that what
// a method does with its zero receiver is what is tested.
func argFor(t *testing.T, ctx context.Context, typ reflect.Type) reflect.Value {
	a, _ := ndarray.FromSlice([]float32{1, 2})
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closed.Close()
	usable := map[reflect.Type]any{
		reflect.TypeFor[context.Context]():     ctx,
		reflect.TypeFor[io.Reader]():           strings.NewReader(""),
		reflect.TypeFor[io.Writer]():           io.Discard,
		reflect.TypeFor[io.ReaderAt]():         bytes.NewReader(nil),
		reflect.TypeFor[net.Listener]():        closed,
		reflect.TypeFor[http.ResponseWriter](): httptest.NewRecorder(),
		reflect.TypeFor[*http.Request]():       httptest.NewRequest("GET", "/", nil),
		reflect.TypeFor[*ndarray.Array]():      a,
		reflect.TypeFor[ndarray.DType]():       a.DType,
		reflect.TypeFor[*testing.T]():          t,
		reflect.TypeFor[error]():               errors.New("an error"),
		reflect.TypeFor[any]():                 new(any),
		reflect.TypeFor[string]():              filepathIn(t),
		reflect.TypeFor[[]int]():               []int{2},
		reflect.TypeFor[[]byte]():              []byte{0x90},
		reflect.TypeFor[zarr.Store]():          zarr.Dir(t.TempDir()),
		reflect.TypeFor[zarr.WritableStore]():  zarr.Dir(t.TempDir()),
		reflect.TypeFor[refs.Source]():         refs.Source{R: bytes.NewReader(nil)},
	}
	if v, ok := usable[typ]; ok {
		return reflect.ValueOf(v).Convert(typ)
	}
	switch typ.Kind() {
	case reflect.Pointer:
		return reflect.New(typ.Elem())
	case reflect.Func:
		return reflect.MakeFunc(typ, func([]reflect.Value) []reflect.Value {
			out := make([]reflect.Value, typ.NumOut())
			for i := range out {
				out[i] = reflect.Zero(typ.Out(i))
			}
			return out
		})
	case reflect.Map:
		return reflect.MakeMap(typ)
	}
	return reflect.Zero(typ)
}

// filepathIn is a path in a directory of the test's own that names
// nothing, for methods that take a file name.
func filepathIn(t *testing.T) string { return t.TempDir() + "/nothing" }

// Every named type of the API is usable as its zero value, or documented
// as unusable and failing with an error: no method of a zero value (or of
// the zero value's pointer) panics, or blocks, given usable arguments.
func TestZeroValues(t *testing.T) {
	b, err := os.ReadFile("api/v1.txt")
	require.NoError(t, err)
	named := regexp.MustCompile(`(?m)^pkg github.com/ndpack/ndpack([^,]*, type [A-Za-z]+) (?:interface|struct|int|func|=|\[\])`)
	for _, m := range named.FindAllStringSubmatch(string(b), -1) {
		if _, ok := zeroTypes[m[1]]; !ok && !strings.HasSuffix(m[0], " interface") {
			t.Errorf("%s: not in zeroTypes", m[1])
		}
	}
	for name, typ := range zeroTypes {
		zero := reflect.New(typ)
		for i := range zero.NumMethod() {
			m := zero.Type().Method(i)
			full := typ.String() + "." + m.Name
			if notCalled[full] {
				continue
			}
			t.Run(name+"."+m.Name, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				defer cancel()
				ft := m.Type
				args := []reflect.Value{}
				for j := 1; j < ft.NumIn(); j++ { // the receiver first
					args = append(args, argFor(t, ctx, ft.In(j)))
				}
				done := make(chan any, 1)
				go func() {
					defer func() { done <- recover() }()
					f := reflect.New(typ).MethodByName(m.Name)
					if ft.IsVariadic() {
						f.CallSlice(args)
					} else {
						f.Call(args)
					}
				}()
				select {
				case p := <-done:
					if p != nil {
						t.Errorf("the zero %s panics: %v", full, p)
					}
				case <-time.After(5 * time.Second):
					t.Errorf("the zero %s blocks", full)
				}
			})
		}
	}
}
