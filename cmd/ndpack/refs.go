package main

import (
	"context"
	"flag"
	"os"

	"github.com/ndpack/ndpack/refs"
)

const refsUsage = `Usage: ndpack refs [options] INPUT... > refs.json

Write a kerchunk reference file (version 1): Zarr v2 metadata for the
arrays of the inputs and, for each chunk, where its bytes lie in its
file, so that zarr-python, xarray and Dask read the arrays where they
are, nothing copied:

  import fsspec, zarr, xarray, dask.array as da
  mapper = fsspec.get_mapper("reference://", fo="refs.json")
  zarr.open(mapper)["image"][...]
  xarray.open_dataset(mapper, engine="zarr", consolidated=False)
  da.from_zarr(mapper, component="image").sum().compute()

Each .npy becomes an array named after its file, each .npz a group
named after it whose arrays are its stored members (a deflated member,
np.savez_compressed's, is refused: ndpack convert RUN.npz RUN.zarr
copies such an archive into a Zarr store). Inputs are told apart by
their first bytes. An INPUT is a local path (referred to by its
absolute path) or an http://, https:// or s3:// URL; only headers are
read: one request of 4 KiB a remote .npy, the directory and one a
member for an .npz, --concurrency inputs at once. Each array's
.zattrs names its dimensions (_ARRAY_DIMENSIONS), as xarray wants.
ndpack reads reference files too: ndpack convert refs.json OUT,
ndpack inspect refs.json.

Options:
  --chunk-rows N       cut each C-order array into chunks of N rows (along
                       its first axis), which Dask reads in parallel; N
                       must divide the rows: zarr-python reads whole
                       chunks only
  --stack NAME         make the inputs, .npy files of one dtype, shape and
                       order, one array NAME of one more dimension, first:
                       element i is the i-th file
  --output FILE        write the reference file to FILE (whole, or not at
                       all) instead of standard output
  --max-header-size N  read .npy headers of up to N bytes (default 10000)
` + remoteHelp + `
Examples:
  ndpack refs run/*.npy > refs.json
  ndpack refs --stack frames shot_*.npy > frames.json
  ndpack refs --chunk-rows 1024 https://data.example.org/big.npy > big.json
  ndpack refs s3://lab/run.npz --output run.json
`

func runRefs(e env, args []string) error {
	fs := flag.NewFlagSet("refs", flag.ContinueOnError)
	chunkRows := fs.Int("chunk-rows", 0, "")
	stack := fs.String("stack", "", "")
	output := fs.String("output", "", "")
	maxHeader := addMaxHeaderFlag(fs)
	remoteSet := addRemoteFlags(fs)
	inputs, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	switch {
	case len(inputs) == 0:
		return usageError("want one INPUT or more")
	case *chunkRows < 0:
		return usageError("--chunk-rows %d: want a positive number of rows", *chunkRows)
	}
	if err := remoteSet.check(); err != nil {
		return err
	}
	o := refs.Options{ChunkRows: *chunkRows, MaxHeaderSize: int(*maxHeader), Remote: remoteOptions(*remoteSet, e.stderr)}
	b := o.NewBuilder()
	if *stack != "" {
		err = b.AddStackFiles(context.Background(), *stack, inputs)
	} else {
		err = b.AddFiles(context.Background(), inputs)
	}
	if err != nil {
		return err
	}
	out := *output
	if out == "" {
		out = "-"
	}
	if out != "-" && !isStdout(out) {
		if err := refuseSameFiles(inputs, out); err != nil {
			return err
		}
	}
	dst, err := openOutput(e, out)
	if err != nil {
		return err
	}
	defer dst.abort()
	if _, err := b.Set().WriteTo(dst.w); err != nil {
		return err
	}
	return dst.commit()
}

// refuseSameFiles fails when out is one of the inputs.
func refuseSameFiles(inputs []string, out string) error {
	for _, in := range inputs {
		if _, err := os.Stat(in); err == nil {
			if err := refuseSameFile(in, out); err != nil {
				return err
			}
		}
	}
	return nil
}
