package mpwalk

import (
	"errors"
	"fmt"
	"io"
	"testing"
)

func TestClassify(t *testing.T) {
	invalid, budget, ended, other := errors.New("invalid"), errors.New("budget"), errors.New("ended"), errors.New("other")
	deep, costly := errors.New("deep"), errors.New("costly")
	c := Classes{Invalid: invalid, OverBudget: budget, TooDeep: deep, TooCostly: costly, Ended: ended, Other: other, EndedDetail: "it ended"}
	depthErr := &DepthError{Limit: 4, Offset: 17}
	readErr := errors.New("connection reset")
	for _, tc := range []struct {
		name string
		err  error
		want Failure
	}{
		{"nil", nil, Failure{Offset: -1}},
		{"invalid", &InvalidError{Byte: 0xc1}, Failure{Kind: Invalid, Class: invalid, Offset: -1, Detail: "msgpack type byte 0xc1 is never used"}},
		{"budget", &BudgetError{What: "bin", Claimed: 9, Budget: 2}, Failure{Kind: OverBudget, Class: budget, Offset: -1, Detail: "bin claims 9, only 2 bytes remain"}},
		{"depth", depthErr, Failure{Kind: TooDeep, Class: deep, Offset: 17, Limit: 4, Detail: "arrays and maps nested more than 4 deep (at byte 17)"}},
		{"wrapped depth, detail unwrapped", fmt.Errorf("reading: %w", depthErr), Failure{Kind: TooDeep, Class: deep, Offset: 17, Limit: 4, Detail: "arrays and maps nested more than 4 deep (at byte 17)"}},
		{"costly", &ExpansionError{Estimate: 1000, Read: 10, Limit: 48}, Failure{Kind: TooCostly, Class: costly, Offset: -1, Detail: "decoding 10 bytes would allocate about 1000, more than 48 times as much (many small maps or arrays)"}},
		{"ended", io.ErrUnexpectedEOF, Failure{Kind: Ended, Class: ended, Offset: -1, Detail: "it ended"}},
		{"other", readErr, Failure{Kind: NotWalk, Class: other, Offset: -1, Detail: "connection reset"}},
	} {
		if got := c.Classify(tc.err); got != tc.want {
			t.Errorf("%s: Classify = %+v, want %+v", tc.name, got, tc.want)
		}
	}
	// Unset classes and words leave the kind and the error's own text.
	if got, want := (Classes{}).Classify(io.ErrUnexpectedEOF), (Failure{Kind: Ended, Offset: -1, Detail: "unexpected EOF"}); got != want {
		t.Errorf("zero Classes: %+v, want %+v", got, want)
	}
	if got := (Classes{}).Classify(readErr); got.Class != nil || got.Kind != NotWalk {
		t.Errorf("zero Classes on a reader's error: %+v, want no class", got)
	}
}
