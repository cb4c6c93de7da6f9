package apilist

import (
	"go/types"
	"strconv"
	"strings"
)

// typ writes t as Go source would, qualified by package name outside the
// package being listed, and with no parameter names in function types, so
// that renaming a parameter does not change the listing.
func (l *lister) typ(t types.Type) string {
	var b strings.Builder
	l.write(&b, t)
	return b.String()
}

func (l *lister) write(b *strings.Builder, t types.Type) {
	switch t := t.(type) {
	case *types.Named:
		l.writeName(b, t.Obj(), t.TypeArgs())
	case *types.Alias:
		l.writeName(b, t.Obj(), t.TypeArgs())
	case *types.TypeParam:
		b.WriteString(t.Obj().Name())
	case *types.Pointer:
		b.WriteString("*")
		l.write(b, t.Elem())
	case *types.Slice:
		b.WriteString("[]")
		l.write(b, t.Elem())
	case *types.Array:
		b.WriteString("[" + strconv.FormatInt(t.Len(), 10) + "]")
		l.write(b, t.Elem())
	case *types.Map:
		b.WriteString("map[")
		l.write(b, t.Key())
		b.WriteString("]")
		l.write(b, t.Elem())
	case *types.Chan:
		b.WriteString(map[types.ChanDir]string{types.SendRecv: "chan ", types.SendOnly: "chan<- ", types.RecvOnly: "<-chan "}[t.Dir()])
		l.write(b, t.Elem())
	case *types.Signature:
		b.WriteString("func" + l.signature(t))
	case *types.Struct:
		l.writeStruct(b, t)
	case *types.Interface:
		l.writeInterface(b, t)
	case *types.Union:
		for i := 0; i < t.Len(); i++ {
			if i > 0 {
				b.WriteString(" | ")
			}
			if t.Term(i).Tilde() {
				b.WriteString("~")
			}
			l.write(b, t.Term(i).Type())
		}
	default: // *types.Basic, and any kind go/types adds later
		b.WriteString(types.TypeString(t, l.qualifier))
	}
}

func (l *lister) qualifier(p *types.Package) string {
	if p == l.pkg {
		return ""
	}
	return p.Name()
}

func (l *lister) writeName(b *strings.Builder, obj *types.TypeName, args *types.TypeList) {
	if _, alias := obj.Type().(*types.Alias); !alias && l.hidden(obj) {
		l.reached[key(obj)] = obj
	}
	if obj.Pkg() != nil && obj.Pkg() != l.pkg {
		b.WriteString(obj.Pkg().Name() + ".")
	}
	b.WriteString(obj.Name())
	if args.Len() > 0 {
		b.WriteString("[")
		for i := 0; i < args.Len(); i++ {
			if i > 0 {
				b.WriteString(", ")
			}
			l.write(b, args.At(i))
		}
		b.WriteString("]")
	}
}

func (l *lister) writeStruct(b *strings.Builder, s *types.Struct) {
	b.WriteString("struct{")
	for i := 0; i < s.NumFields(); i++ {
		if i > 0 {
			b.WriteString("; ")
		}
		f := s.Field(i)
		if !f.Embedded() {
			b.WriteString(f.Name() + " ")
		}
		l.write(b, f.Type())
		if tag := s.Tag(i); tag != "" {
			b.WriteString(" " + strconv.Quote(tag))
		}
	}
	b.WriteString("}")
}

func (l *lister) writeInterface(b *strings.Builder, t *types.Interface) {
	if t.NumEmbeddeds() == 0 && t.NumExplicitMethods() == 0 {
		// any, however it was written or whichever Go (with or without
		// types.Alias for any) loaded it.
		b.WriteString("any")
		return
	}
	var elems []string
	if t.IsImplicit() { // a constraint written as "~int" or "A | B"
		l.write(b, t.EmbeddedType(0))
		return
	}
	for i := 0; i < t.NumEmbeddeds(); i++ {
		elems = append(elems, l.typ(t.EmbeddedType(i)))
	}
	for i := 0; i < t.NumExplicitMethods(); i++ {
		m := t.ExplicitMethod(i)
		elems = append(elems, m.Name()+l.signature(m.Type().(*types.Signature)))
	}
	b.WriteString("interface{ " + strings.Join(elems, "; ") + " }")
}

// signature writes a function's parameters and results without names:
// "(int, ...string) (T, error)".
func (l *lister) signature(sig *types.Signature) string {
	var b strings.Builder
	b.WriteString("(")
	for i := 0; i < sig.Params().Len(); i++ {
		if i > 0 {
			b.WriteString(", ")
		}
		t := sig.Params().At(i).Type()
		if sig.Variadic() && i == sig.Params().Len()-1 {
			b.WriteString("...")
			t = t.(*types.Slice).Elem()
		}
		l.write(&b, t)
	}
	b.WriteString(")")
	switch n := sig.Results().Len(); {
	case n == 1:
		b.WriteString(" ")
		l.write(&b, sig.Results().At(0).Type())
	case n > 1:
		b.WriteString(" (")
		for i := 0; i < n; i++ {
			if i > 0 {
				b.WriteString(", ")
			}
			l.write(&b, sig.Results().At(i).Type())
		}
		b.WriteString(")")
	}
	return b.String()
}

// typeParams writes a type parameter list with its constraints, "[T any,
// U Element]", or nothing when there is none.
func (l *lister) typeParams(tp *types.TypeParamList) string {
	if tp.Len() == 0 {
		return ""
	}
	var parts []string
	for i := 0; i < tp.Len(); i++ {
		parts = append(parts, tp.At(i).Obj().Name()+" "+l.typ(tp.At(i).Constraint()))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}
