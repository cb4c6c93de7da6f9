package peertext

import "testing"

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
