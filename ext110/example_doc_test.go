package ext110_test

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/ndpack/ndpack"
	"github.com/ndpack/ndpack/internal/testutil/pypeer"
	"github.com/ndpack/ndpack/internal/testutil/sharedfiles"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/vmihailenco/msgpack/v5"
)

// frame is a message as a Go service sends it to Python clients.
type frame struct {
	Exposure float64        `msgpack:"exposure"`
	Image    *ndarray.Array `msgpack:"image"`
}

func pythonMessage() ([]byte, error) {
	image, err := ndarray.FromSlice([]uint16{1, 2, 3, 4}, 2, 2)
	if err != nil {
		return nil, err
	}
	if image, err = image.ToOrder('<'); err != nil {
		return nil, err
	}
	return msgpack.Marshal(frame{Exposure: 0.5, Image: image})
}

// A message for a Python peer. With YEP-110's reference ext_hook (see
// "Python peers" in the package documentation),
// msgpack.unpackb(b, ext_hook=ext_hook) gives the dict
//
//	{'exposure': 0.5, 'image': np.array([[1, 2], [3, 4]], dtype='<u2')}
//
// (TestPythonPeerExample runs exactly that on these bytes), and what
// msgpack.packb(msg, default=pack_ndarray) writes comes back here through
// package ndpack's UnmarshalMessage, which checks a message from outside
// before the msgpack library decodes it.
func Example_python() {
	b, err := pythonMessage()
	if err != nil {
		panic(err)
	}
	fmt.Println(hex.EncodeToString(b))

	// The same message as the reference pack_ndarray writes it
	// (msgpack-python 1.0.3, numpy 1.24).
	fromPython, _ := hex.DecodeString("82a86578706f73757265cb3fe0000000000000a5696d616765c72e6e84a464617461" +
		"c4080100020003000400a774797065737472a33c7532a57368617065920202a776657273696f6e03")
	var msg map[string]any
	if err := (ndpack.MessageOptions{}).UnmarshalMessage(fromPython, &msg); err != nil {
		panic(err)
	}
	image := msg["image"].(*ndarray.Array)
	v, _ := ndarray.Values[uint16](image)
	fmt.Println(msg["exposure"], image.DType, image.Shape, v)
	fmt.Println(bytes.Equal(b, fromPython))
	// Output:
	// 82a86578706f73757265cb3fe0000000000000a5696d616765c72e6e84a464617461c4080100020003000400a774797065737472a33c7532a57368617065920202a776657273696f6e03
	// 0.5 <u2 [2 2] [1 2 3 4]
	// true
}

// TestPythonPeerExample holds Example_python and the package documentation
// to their word: the reference ext_hook, as a Python peer pastes it from
// the YEP, decodes the example's bytes, and pack_ndarray writes them.
func TestPythonPeerExample(t *testing.T) {
	b, err := pythonMessage()
	if err != nil {
		t.Fatal(err)
	}
	out := pypeer.Run(t, `
import numpy as np
msg = msgpack.unpackb(sys.stdin.buffer.read(), ext_hook=ext_hook)
img = msg["image"]
print(type(img).__name__, img.dtype.str, img.shape, img.tolist(), msg["exposure"])
print(msgpack.packb({"exposure": 0.5, "image": np.array([[1, 2], [3, 4]], dtype="<u2")}, default=pack_ndarray).hex())
`, b)
	want := fmt.Sprintf("ndarray <u2 (2, 2) [[1, 2], [3, 4]] 0.5\n%x\n", b)
	if string(out) != want {
		t.Errorf("python peer printed\n%s\nwant\n%s", out, want)
	}
}

// TestDocPythonSnippet runs the Python of the package documentation as a
// reader would use it: the snippet from doc.go with the YEP's reference
// code pasted where it says, and nothing else (not pypeer's copy, which
// would hide a name the snippet forgets to define).
func TestDocPythonSnippet(t *testing.T) {
	pypeer.Require(t)
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	var snippet []string
	for _, line := range strings.Split(string(doc), "\n") {
		switch {
		case strings.HasPrefix(line, "//\t"):
			snippet = append(snippet, strings.TrimPrefix(line, "//\t"))
		case line == "//" && len(snippet) > 0:
			snippet = append(snippet, "")
		case len(snippet) > 0:
			goto done
		}
	}
done:
	code := strings.Join(snippet, "\n")
	if !strings.HasPrefix(code, "import sys") {
		t.Fatalf("no Python snippet in doc.go, found %q", code)
	}
	yep := string(sharedfiles.ReadFile(t, "../../shared/specs/yep-110.txt"))
	start, end := strings.Index(yep, "class ArrayInterface"), strings.Index(yep, "Rejected Ideas")
	if start < 0 || end < start {
		t.Fatal("no reference implementation in yep-110.txt")
	}
	const placeholder = "# ArrayInterface, pack_ndarray and ext_hook, as the YEP prints them"
	if !strings.Contains(code, placeholder) {
		t.Fatalf("the snippet lost its placeholder line %q", placeholder)
	}
	code = strings.Replace(code, placeholder, yep[start:end], 1)
	// b is what ndpack wrote; image what the Python peer sends back.
	code = strings.Replace(code, "msg = msgpack.unpackb",
		"b = sys.stdin.buffer.read()\nimage = np.array([[1, 2], [3, 4]], dtype='<u2')\nmsg = msgpack.unpackb", 1)
	code += "\nprint(msg['image'].dtype.str, msg['image'].tolist())\nsys.stdout.write(b.hex())\n"

	in, err := pythonMessage()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(pypeer.Python, "-c", code)
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the documented snippet failed: %v\n%s\n--- script:\n%s", err, stderr.String(), code)
	}
	lines := strings.SplitN(string(out), "\n", 2)
	if len(lines) != 2 || lines[0] != "<u2 [[1, 2], [3, 4]]" {
		t.Fatalf("ext_hook decoded %q", out)
	}
	packed, err := hex.DecodeString(lines[1])
	if err != nil {
		t.Fatal(err)
	}
	var msg map[string]any
	if err := (ndpack.MessageOptions{}).UnmarshalMessage(packed, &msg); err != nil {
		t.Fatalf("pack_ndarray's bytes: %v", err)
	}
	image, ok := msg["image"].(*ndarray.Array)
	if !ok {
		t.Fatalf("pack_ndarray's message decoded to %v", msg)
	}
	v, _ := ndarray.Values[uint16](image)
	if fmt.Sprint(image.DType, image.Shape, v) != "<u2 [2 2] [1 2 3 4]" {
		t.Errorf("pack_ndarray's image decoded to %v %v %v", image.DType, image.Shape, v)
	}
}
