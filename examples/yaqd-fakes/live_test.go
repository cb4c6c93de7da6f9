package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
)

// liveTraitsSrc returns the yaq-traits sources and the Python yaq sources
// the live yaq-traits test runs with: NDPACK_YAQ_TRAITS when set, else the
// traits/ folder of NDPACK_YAQ_SRC when it holds yaq_traits (so that the
// one variable the other live tests need runs this one too); "" when the
// test has nothing to run.
func liveTraitsSrc(traits, src string) (string, string) {
	if src == "" {
		return "", ""
	}
	if traits == "" {
		if st, err := os.Stat(filepath.Join(src, "traits", "yaq_traits")); err == nil && st.IsDir() {
			traits = filepath.Join(src, "traits")
		}
	}
	if traits == "" {
		return "", ""
	}
	return traits, src
}

func TestYaqTraitsSrcDefault(t *testing.T) {
	src := t.TempDir()
	tr, s := liveTraitsSrc("", src)
	assert.Equal(t, "", tr, "no traits/ beside the sources")
	assert.Equal(t, "", s)
	tr, s = liveTraitsSrc("/elsewhere/yaq-traits", "")
	assert.Equal(t, "", tr, "yaq-traits without the sources (fastavro) cannot run")
	assert.Equal(t, "", s)
	tr, s = liveTraitsSrc("/elsewhere/yaq-traits", src)
	assert.Equal(t, "/elsewhere/yaq-traits", tr)
	assert.Equal(t, src, s)
	assert.NoError(t, os.MkdirAll(filepath.Join(src, "traits", "yaq_traits"), 0o755))
	tr, s = liveTraitsSrc("", src)
	assert.Equal(t, filepath.Join(src, "traits"), tr)
	assert.Equal(t, src, s)
	tr, _ = liveTraitsSrc("/elsewhere/yaq-traits", src)
	assert.Equal(t, "/elsewhere/yaq-traits", tr, "NDPACK_YAQ_TRAITS wins")
}
