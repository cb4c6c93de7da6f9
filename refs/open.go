package refs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/ndpack/ndpack/remote"
)

// prefixSize is what an input's first request asks for: an .npy's whole
// header (numpy writes headers of 64 to a few hundred bytes), and the
// start of an .npz.
const prefixSize = 4096

// open opens the input name: a local file (its references name its
// absolute path) or a URL, read by one request for its first 4 KiB.
func (o Options) open(ctx context.Context, name string) (Source, func(), error) {
	if remote.IsURL(name) {
		obj, err := o.Remote.OpenPrefix(ctx, name, prefixSize)
		if err != nil {
			return Source{}, nil, err
		}
		return Source{URL: name, R: obj, Size: obj.Size()}, func() { obj.Close() }, nil
	}
	f, err := os.Open(name)
	if err != nil {
		return Source{}, nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("%s is not a regular file", name)
	}
	abs, aerr := filepath.Abs(name)
	if err == nil {
		err = aerr
	}
	if err != nil {
		f.Close()
		return Source{}, nil, err
	}
	return Source{URL: abs, R: f, Size: fi.Size()}, func() { f.Close() }, nil
}

// concurrency is how many inputs are opened at once.
func (o Options) concurrency() int {
	if o.Remote.Concurrency > 0 {
		return o.Remote.Concurrency
	}
	return 8
}

// scanFiles opens and scans the inputs names, Options.Remote.Concurrency
// (8 by default) at once, each closed once its headers are read; as
// stack is set, each is read as an .npy.
func (b *Builder) scanFiles(ctx context.Context, names []string, stack bool) []scanned {
	out := make([]scanned, len(names))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(b.o.concurrency(), len(names)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				src, done, err := b.o.open(ctx, names[i])
				if err != nil {
					out[i] = scanned{url: names[i], kind: "npy", err: err}
					continue
				}
				if stack && Kind(src) == "npy" {
					out[i] = b.scanAs("npy", src)
				} else {
					out[i] = b.scan(src)
				}
				out[i].url = names[i] // messages name the input as it was given
				done()
			}
		}()
	}
	for i := range names {
		next <- i
	}
	close(next)
	wg.Wait()
	return out
}

// AddFiles opens the inputs names (local paths, or http://, https:// and
// s3:// URLs, Options.Remote.Concurrency at once) and adds each, in order,
// as Add does, named after its file (NameOf). Only headers are read: an
// .npy's first 4 KiB (one request for a URL), an .npz's directory and
// each member's headers. Local inputs are referred to by their absolute
// paths.
// It fails with the first input's error, in order, naming it.
func (b *Builder) AddFiles(ctx context.Context, names []string) error {
	for i, s := range b.scanFiles(ctx, names, false) {
		if err := b.add(NameOf(names[i]), s); err != nil {
			return inputError(names[i], err)
		}
	}
	return nil
}

// AddStackFiles opens the .npy files names as AddFiles does and adds them
// as AddStack does, stacked into the array name in the order given.
// It fails as AddStack does.
func (b *Builder) AddStackFiles(ctx context.Context, name string, names []string) error {
	return b.addStack(name, b.scanFiles(ctx, names, true))
}

// inputError names the input in err, unless err is a file's error,
// which names it already.
func inputError(name string, err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return err
	}
	return fmt.Errorf("%s: %w", remote.Redact(name), err)
}
