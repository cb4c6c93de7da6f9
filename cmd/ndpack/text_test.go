package main

import (
	"encoding/json"
	"testing"
	"unicode/utf8"
)

func TestEscapeText(t *testing.T) {
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
		if got := escapeText(c.in); got != c.want {
			t.Errorf("escapeText(%q) = %q, want %q", c.in, got, c.want)
		}
		if got := escapeText(escapeText(c.in)); got != c.want {
			t.Errorf("escapeText twice (%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestEscapeJSON(t *testing.T) {
	in, err := json.Marshal(map[string]string{"k\x1b\u202e": "v\x7f\u009b\u2066é\u2028"})
	if err != nil {
		t.Fatal(err)
	}
	got := string(escapeJSON(in))
	want := `{"k\u001b\u202e":"v\u007f\u009b\u2066é\u2028"}`
	if got != want {
		t.Fatalf("escapeJSON: %s, want %s", got, want)
	}
	var back map[string]string
	if err := json.Unmarshal([]byte(got), &back); err != nil || back["k\x1b\u202e"] != "v\x7f\u009b\u2066é\u2028" {
		t.Errorf("escapeJSON changed the value: %q %v", back, err)
	}
	if plain := []byte(`{"a":"é"}`); &escapeJSON(plain)[0] != &plain[0] {
		t.Error("escapeJSON copied JSON that needs nothing")
	}
}

func TestRedactURLs(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"plain text: no URL", "plain text: no URL"},
		{"https://h.example/a.npy: 404", "https://h.example/a.npy: 404"},
		{"http://user:hunter2@127.0.0.1:8080/a.npy: 404", "http://127.0.0.1:8080/a.npy: 404"},
		{`cannot tell the format of "https://h/x?X-Amz-Signature=deadbeef"; use --from`, `cannot tell the format of "https://h/x"; use --from`},
		{"https://h/a.npz?X-Amz-Signature=1:image and s3://b/k.npy#frag.", "https://h/a.npz and s3://b/k.npy."},
		{"(see http://u:p@h/%zz?sig=1)", "(see http://h/%zz)"},
		{`Get "wss://u:p@h/ws?token=t": refused`, `Get "wss://h/ws": refused`},
	} {
		if got := redactURLs(c.in); got != c.want {
			t.Errorf("redactURLs(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestOneLine(t *testing.T) {
	got := oneLine("npybridge: member \"a\"\n  of http://u:pw@h/r.npz?X-Amz-Signature=s\tholds\x1b[2J \u202eevil")
	want := `npybridge: member "a" of http://h/r.npz holds\x1b[2J \u202eevil`
	if got != want {
		t.Errorf("oneLine = %q, want %q", got, want)
	}
}

// FuzzOneLine: whatever a message holds, the line printed is valid UTF-8
// with no character escapeText escapes (no newline either), and escaping
// again changes nothing.
func FuzzOneLine(f *testing.F) {
	for _, s := range []string{"", "plain", "evil\x1b]52;c;aGk=\a", "a\nb\r\tc", "\u009b\u202e\u2066\xff\xc3",
		"http://u:p@h/x?X-Amz-Signature=s: \x1b[2J", "s3://b/k#\u202e", "http://[::1/%zz?q"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := oneLine(s)
		if !utf8.ValidString(out) {
			t.Fatalf("oneLine(%q) = %q: not UTF-8", s, out)
		}
		for i, r := range out {
			if mustEscape(r, utf8.RuneLen(r)) {
				t.Fatalf("oneLine(%q) = %q: %U at byte %d", s, out, r, i)
			}
		}
		if e := escapeText(s); escapeText(e) != e {
			t.Fatalf("escapeText(%q) = %q, again %q", s, e, escapeText(e))
		}
	})
}
