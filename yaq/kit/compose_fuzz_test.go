package kit

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ndpack/ndpack/yaq"
)

// FuzzComposeTOML: no description, however malformed, panics the
// composer, and every one it accepts gives a protocol the daemon and the
// client can parse, whose config defaults fit their types.
func FuzzComposeTOML(f *testing.F) {
	for _, t := range []string{isDaemonTOML, hasLimitsTOML, hasTransformedPositionTOML, isSensorTOML, hasMappingTOML} {
		f.Add([]byte(t))
	}
	f.Add([]byte("protocol = \"x\"\ntraits = [\"is-daemon\", \"has-turret\"]\n[config.a]\ntype = {type = \"map\", values = [\"null\", \"ndarray\"]}\ndefault = {}\n" +
		"[messages.m]\nrequest = [{name = \"p\", type = {type = \"enum\", name = \"e\", symbols = [\"a\"]}, default = \"a\"}]\n" +
		"[[types]]\ntype = \"record\"\nname = \"r\"\nfields = [{name = \"f\", type = \"int\", default = \"__null__\"}]\n"))
	if files, _ := filepath.Glob("../../../shared/yaq/protocols/*.toml"); len(files) > 0 {
		for _, file := range files {
			if b, err := os.ReadFile(file); err == nil {
				f.Add(b)
			}
		}
	}
	f.Fuzz(func(t *testing.T, text []byte) {
		c, err := ComposeTOML("fuzz.toml", text)
		if err != nil {
			return
		}
		p, err := yaq.ParseProtocol(c.JSON)
		if err != nil {
			t.Fatalf("composed a protocol that does not parse: %v\n%s", err, c.JSON)
		}
		if _, err := yaq.NewDaemon("fuzz", c.JSON); err != nil {
			t.Fatalf("composed a protocol a daemon refuses: %v", err)
		}
		if p.Name != c.Name {
			t.Fatalf("name %q, parsed %q", c.Name, p.Name)
		}
	})
}
