package main

import (
	"github.com/ndpack/ndpack/internal/peertext"
	"testing"
	"unicode/utf8"
)

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
// with no character peertext.Line escapes (no newline either), and escaping
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
		if peertext.Line(out) != out {
			t.Fatalf("oneLine(%q) = %q: it holds what peertext.Line escapes", s, out)
		}
		if e := peertext.Line(s); peertext.Line(e) != e {
			t.Fatalf("peertext.Line(%q) = %q, again %q", s, e, peertext.Line(e))
		}
	})
}
