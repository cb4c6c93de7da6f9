package peertext

import (
	"encoding/json"
	"testing"
)

func TestEscape(t *testing.T) {
	for _, c := range []struct{ in, line, lines, quote string }{
		{"plain text", "plain text", "plain text", "plain text"},
		{`C:\path\x1b`, `C:\path\x1b`, `C:\path\x1b`, `C:\path\x1b`},
		{"héllo ✓", "héllo ✓", "héllo ✓", "héllo ✓"},
		{"a\nb\tc", `a\nb\tc`, "a\nb\tc", `"a\nb\tc"`},
		{"\x1b]52;c;aGk=\a", `\x1b]52;c;aGk=\a`, `\x1b]52;c;aGk=\a`, `"\x1b]52;c;aGk=\a"`},
		{"\x1b[2J\r\x00\x7f", `\x1b[2J\r\x00\x7f`, `\x1b[2J\r\x00\x7f`, `"\x1b[2J\r\x00\x7f"`},
		{"csi \u009b31m bidi \u202e", `csi \u009b31m bidi \u202e`, `csi \u009b31m bidi \u202e`, `"csi \u009b31m bidi \u202e"`},
		{"bad \xff\xfe utf8", `bad \xff\xfe utf8`, `bad \xff\xfe utf8`, `"bad \xff\xfe utf8"`},
		{"", "", "", ""},
	} {
		if got := Line(c.in); got != c.line {
			t.Errorf("Line(%q) = %q, want %q", c.in, got, c.line)
		}
		if got := Lines(c.in); got != c.lines {
			t.Errorf("Lines(%q) = %q, want %q", c.in, got, c.lines)
		}
		if got := Quote(c.in); got != c.quote {
			t.Errorf("Quote(%q) = %q, want %q", c.in, got, c.quote)
		}
	}
}

func TestEscapeAllocatesNothingForCleanText(t *testing.T) {
	s := "ValueError: the gripper is on fire (ünïcode too)"
	if n := testing.AllocsPerRun(100, func() { Line(s); Lines(s); Quote(s) }); n != 0 {
		t.Errorf("%v allocations for text that needs no escaping", n)
	}
}

func TestLineAsTheCommandPrints(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"run.npz: image (3,) <f8 µs café 画像 \\x1b 'q' \"q\"", "run.npz: image (3,) <f8 µs café 画像 \\x1b 'q' \"q\""},
		{"evil\x1b]52;c;aGk=\a.npy", `evil\x1b]52;c;aGk=\a.npy`},
		{"a\x07b", `a\ab`},
		{"tab\there\nnew\rret\x00nul\x7fdel", `tab\there\nnew\rret\x00nul\x7fdel`},
		{"csi\u009b31m", `csi\u009b31m`},
		{"rlo\u202egnp.npy", `rlo\u202egnp.npy`},
		{"\u061c\u200e\u200f\u2028\u2029\u202a\u202b\u202c\u202d\u2066\u2067\u2068\u2069", `\u061c\u200e\u200f\u2028\u2029\u202a\u202b\u202c\u202d\u2066\u2067\u2068\u2069`},
		{"bad\xffutf8\xc3", `bad\xffutf8\xc3`},
		{"\ufffd stays, \u200d and \u00a0 too", "\ufffd stays, \u200d and \u00a0 too"},
	} {
		if got := Line(c.in); got != c.want {
			t.Errorf("Line(%q) = %q, want %q", c.in, got, c.want)
		}
		if got := Line(Line(c.in)); got != c.want {
			t.Errorf("escapeText twice (%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestJSON(t *testing.T) {
	in, err := json.Marshal(map[string]string{"k\x1b\u202e": "v\x7f\u009b\u2066é\u2028"})
	if err != nil {
		t.Fatal(err)
	}
	got := string(JSON(in))
	want := `{"k\u001b\u202e":"v\u007f\u009b\u2066é\u2028"}`
	if got != want {
		t.Fatalf("escapeJSON: %s, want %s", got, want)
	}
	var back map[string]string
	if err := json.Unmarshal([]byte(got), &back); err != nil || back["k\x1b\u202e"] != "v\x7f\u009b\u2066é\u2028" {
		t.Errorf("escapeJSON changed the value: %q %v", back, err)
	}
	if plain := []byte(`{"a":"é"}`); &JSON(plain)[0] != &plain[0] {
		t.Error("escapeJSON copied JSON that needs nothing")
	}
}
