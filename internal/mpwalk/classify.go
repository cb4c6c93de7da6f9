package mpwalk

import (
	"errors"
	"io"
)

// Kind is which rule or limit a walk found the input breaking.
type Kind int

// The kinds of a walk's failure, one per error it returns.
const (
	NotWalk    Kind = iota // not the walk's failure (a reader's error), or nil
	Invalid                // *InvalidError: a byte msgpack never uses
	OverBudget             // *BudgetError: a length past the bytes left
	TooDeep                // *DepthError: nesting past the limit
	TooCostly              // *ExpansionError: decoding would allocate too much
	Ended                  // io.ErrUnexpectedEOF: the input ended inside a value
)

// Classes is how one package reports a walk's failures in its own terms:
// the sentinel error (the class) of each kind, and the words for input
// that ends inside a value. A nil class leaves that kind unreported:
// Classify then gives a nil Class, for the caller to handle (or pass on).
type Classes struct {
	Invalid, OverBudget, TooDeep, TooCostly, Ended error
	// Other is the class of an error that is not the walk's (NotWalk).
	Other error
	// EndedDetail is the detail of Ended; empty, the error's own text.
	EndedDetail string
}

// Failure is a walk's error classified once, for every package that
// reports it.
type Failure struct {
	Kind  Kind
	Class error // the caller's class for Kind; nil for none
	// Offset is where the container nested too deep starts (TooDeep),
	// counted from the start of the walk; -1 for every other kind.
	Offset int64
	Limit  int // the nesting limit passed (TooDeep)
	// Detail is the walker's words: the text of the walk's own error
	// (unwrapped), of err for NotWalk, or Classes.EndedDetail.
	Detail string
}

// Classify says which of the walk's failures err is, and how c reports it.
// The walk's errors are matched with errors.As, so they may be wrapped.
func (c Classes) Classify(err error) Failure {
	var (
		invalid *InvalidError
		budget  *BudgetError
		depth   *DepthError
		expand  *ExpansionError
	)
	f := Failure{Offset: -1}
	if err != nil {
		f.Detail = err.Error()
	}
	switch {
	case err == nil:
	case errors.As(err, &expand):
		f.Kind, f.Class, f.Detail = TooCostly, c.TooCostly, expand.Error()
	case errors.As(err, &depth):
		f.Kind, f.Class, f.Detail, f.Offset, f.Limit = TooDeep, c.TooDeep, depth.Error(), depth.Offset, depth.Limit
	case errors.As(err, &budget):
		f.Kind, f.Class, f.Detail = OverBudget, c.OverBudget, budget.Error()
	case errors.As(err, &invalid):
		f.Kind, f.Class, f.Detail = Invalid, c.Invalid, invalid.Error()
	case errors.Is(err, io.ErrUnexpectedEOF):
		f.Kind, f.Class = Ended, c.Ended
		if c.EndedDetail != "" {
			f.Detail = c.EndedDetail
		}
	default:
		f.Class = c.Other
	}
	return f
}
