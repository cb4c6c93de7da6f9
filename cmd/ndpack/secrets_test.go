package main

import (
	"archive/zip"
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ndpack/ndpack/npybridge"
)

const (
	testPassword  = "hunter2"
	testSignature = "deadbeefsecret"
)

// signedServer serves dir on 127.0.0.1 to requests that carry the user
// and password of a URL (Basic authentication) and the signature of a
// presigned one (the X-Amz-Signature query); others get 403. It returns
// the server's URL and the prefix and suffix that sign a path.
func signedServer(t *testing.T, dir string) (plain, signedPrefix, signedQuery string) {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, pass, _ := r.BasicAuth()
		if user != "user" || pass != testPassword || r.URL.Query().Get("X-Amz-Signature") != testSignature {
			http.Error(w, "unsigned", http.StatusForbidden)
			return
		}
		http.ServeFile(w, r, filepath.Join(dir, filepath.Base(r.URL.Path)))
	}))
	t.Cleanup(srv.Close)
	return srv.URL, strings.Replace(srv.URL, "http://", "http://user:"+testPassword+"@", 1), "?X-Amz-Credential=ops.example%2F20240101%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Signature=" + testSignature
}

// No message, on standard error or in a report on standard output, shows
// the user, password or query of a URL given on the command line, however
// the URL reached it: a name a command prints, a usage error quoting an
// argument, a URL too broken to parse, a member picked as URL:NAME
// (issue 41, item 5).
func TestURLSecretsNeverShown(t *testing.T) {
	dir := t.TempDir()
	a := mustSlice(t, []float64{0, 1, 2, 3, 4, 5}, 2, 3)
	b := mustSlice(t, []float64{0, 1, 2, 3, 4, 6}, 2, 3)
	require.NoError(t, npybridge.WriteFile(filepath.Join(dir, "a.npy"), a))
	require.NoError(t, npybridge.WriteFile(filepath.Join(dir, "b.npy"), b))
	require.NoError(t, npybridge.WriteNPZFile(filepath.Join(dir, "run.npz"), []npybridge.NamedArray{{Name: "a", Array: a}, {Name: "image", Array: a}}, false))
	require.NoError(t, npybridge.WriteNPZFile(filepath.Join(dir, "other.npz"), []npybridge.NamedArray{{Name: "a", Array: b}, {Name: "dark", Array: a}}, false))
	var z bytes.Buffer
	zw := zip.NewWriter(&z)
	w, err := zw.CreateHeader(&zip.FileHeader{Name: "what?x.npy", Method: zip.Store})
	require.NoError(t, err)
	w.Write([]byte("garbage"))
	require.NoError(t, zw.Close())
	require.NoError(t, os.WriteFile(filepath.Join(dir, "bad.npz"), z.Bytes(), 0o644))
	url, pre, q := signedServer(t, dir)
	usage := func(cmd, msg string) string {
		return "ndpack " + cmd + ": " + msg + "\nRun 'ndpack help " + cmd + "' for usage.\n"
	}
	for _, c := range []struct {
		args           []string
		code           int
		stdout, stderr string
	}{
		{[]string{"show", "--field", "nosuch", pre + "/a.npy" + q}, 1, "",
			"ndpack: " + url + `/a.npy: ndarray: element type mismatch: <f8 is not a record dtype: no field "nosuch"` + "\n"},
		{[]string{"diff", pre + "/a.npy" + q, "b.npy"}, 1, url + "/a.npy and b.npy differ: 1 of 6 elements (16.7%)\n" +
			"  first at (1, 2): 5.0 vs 6.0\n  max absolute difference 1, max relative difference 0.166667\n", ""},
		{[]string{"diff", pre + "/run.npz" + q, "other.npz"}, 1, url + "/run.npz:a and other.npz:a differ: 1 of 6 elements (16.7%)\n" +
			"  first at (1, 2): 5.0 vs 6.0\n  max absolute difference 1, max relative difference 0.166667\n" +
			"image: only in " + url + "/run.npz\ndark: only in other.npz\n", ""},
		// A member named before the query is cut from the path; the
		// query, signature and all, stays with the URL.
		{[]string{"show", pre + "/run.npz:nosuch" + q}, 1, "", "ndpack: " + url + `/run.npz: no array "nosuch"; it holds a, image` + "\n"},
		{[]string{"show", pre + "/run.npz" + q + ":nosuch"}, 1, "", "ndpack: " + url + `/run.npz: no array "nosuch"; it holds a, image` + "\n"},
		{[]string{"show", pre + "/run.npz:image" + q}, 0, "[[0. 1. 2.]\n [3. 4. 5.]]\n", ""},
		{[]string{"show", "--rows", "1:", pre + "/run.npz" + q + ":image"}, 0, "[[3. 4. 5.]]\n", ""},
		{[]string{"convert", pre + "/a.npy:x" + q, "x.npy"}, 2, "", usage("convert",
			`"`+url+`/a.npy:x": NAME in IN:NAME picks an array of an .npz or a msgpack map; an .npy holds one array (its rows: --rows START:STOP)`)},
		// A member that cannot be read is named after the URL as shown,
		// whatever it holds ('?' once made it part of the URL's query).
		{[]string{"inspect", pre + "/bad.npz" + q}, 1, url + "/bad.npz: npz, 1 array\n  what?x:\n    not read  (said on standard error)\n",
			"ndpack: " + url + `/bad.npz: what?x: member "what?x": npybridge: truncated input at byte 0: the file ends inside the magic string, version and header length` + "\n"},
		// Usage errors quote arguments as messages show them.
		{[]string{"convert", "--to", "npy", "a.npy", pre + "/x.npz" + q}, 2, "", usage("convert",
			`--to npy contradicts the extension of "`+url+`/x.npz" (npz); rename the file or drop --to`)},
		{[]string{"convert", "a.npy", pre + "/x.npy" + q}, 2, "", usage("convert",
			"OUT "+url+"/x.npy: only s3:// objects are written; HTTP outputs are not")},
		{[]string{"render", "a.npy", pre + "/x.png" + q}, 2, "", usage("render",
			"OUT "+url+"/x.png: render writes a local file or standard output, not a URL")},
		{[]string{pre + "/x" + q}, 2, "", `ndpack: unknown command "` + url + `/x"; run 'ndpack help'` + "\n"},
		// A URL net/url cannot parse is cut at its last '@' and first '?'.
		{[]string{"convert", pre + "/%zz" + q, "x.npy"}, 2, "", usage("convert",
			`cannot tell the format of "`+url+`/%zz" from its extension (.npy, .npz, .msgpack, .mpk); use --from`)},
		{[]string{"inspect", pre + "/%zz.npy" + q}, 1, "", "ndpack: " + url + "/%zz.npy: remote: unsupported URL: " + url + "/%zz.npy: not a URL\n"},
	} {
		t.Run(c.args[0], func(t *testing.T) { // (the arguments hold the secrets)
			cmd := exec.Command(ndpackBin, c.args...)
			cmd.Dir = dir
			r := runCmd(t, cmd, nil)
			if r.code != c.code || r.stdout != c.stdout || r.stderr != c.stderr {
				t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s\nwant exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr, c.code, c.stdout, c.stderr)
			}
		})
	}
	// A lone array put into an .npz is named after the object, not its
	// query (a '.' in it once made the rest part of the name).
	r := cli(t, nil, "convert", pre+"/a.npy"+q, filepath.Join(dir, "lone.npz"))
	require.Equal(t, 0, r.code, r.stderr)
	lone, err := npybridge.OpenNPZFile(filepath.Join(dir, "lone.npz"))
	require.NoError(t, err)
	defer lone.Close()
	if names := lone.Names(); len(names) != 1 || names[0] != "a" {
		t.Errorf("convert URL.npy?QUERY lone.npz: members %q, want [a]", names)
	}
}
