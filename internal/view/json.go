package view

import (
	"encoding/json"
	"io"
	"reflect"
)

// JSON writes v as indented JSON with every nil slice written as [] (the
// JSON documents promise that lists are never null), HTML left unescaped.
func JSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if v == nil {
		return enc.Encode(v)
	}
	return enc.Encode(emptyLists(reflect.ValueOf(v)).Interface())
}

// emptyLists returns a copy of v in which every nil slice reachable through
// exported fields, pointers, slices, maps and interfaces is an empty one.
func emptyLists(v reflect.Value) reflect.Value {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return v
		}
		n := reflect.New(v.Type().Elem())
		n.Elem().Set(emptyLists(v.Elem()))
		return n
	case reflect.Interface:
		if v.IsNil() {
			return v
		}
		n := reflect.New(v.Type()).Elem()
		n.Set(emptyLists(v.Elem()))
		return n
	case reflect.Struct:
		n := reflect.New(v.Type()).Elem()
		n.Set(v)
		for i := 0; i < v.NumField(); i++ {
			if f := n.Field(i); f.CanSet() {
				f.Set(emptyLists(v.Field(i)))
			}
		}
		return n
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return v // []byte is a string in JSON
		}
		n := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		for i := 0; i < v.Len(); i++ {
			n.Index(i).Set(emptyLists(v.Index(i)))
		}
		return n
	case reflect.Map:
		if v.IsNil() {
			return v
		}
		n := reflect.MakeMapWithSize(v.Type(), v.Len())
		it := v.MapRange()
		for it.Next() {
			n.SetMapIndex(it.Key(), emptyLists(it.Value()))
		}
		return n
	}
	return v
}
