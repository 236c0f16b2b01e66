package kernel

import "github.com/deponent-dev/deponent-action/pkg/canon"

// ParamsOf converts a tool call's JSON arguments (an object) into the map
// Call.Params holds and the gate decides on: strings, booleans and null as
// Go values, numbers as canon.Value (their exact text, never a float64
// round trip), arrays and objects recursively. Plans and the MCP server
// both read calls this way, so the same JSON is the same call.
func ParamsOf(v canon.Value) map[string]any {
	out := make(map[string]any, len(v.Members()))
	for _, m := range v.Members() {
		out[m.Key] = paramValue(m.Value)
	}
	return out
}

func paramValue(v canon.Value) any {
	switch v.Kind() {
	case canon.String:
		s, _ := v.AsString()
		return s
	case canon.Bool:
		b, _ := v.AsBool()
		return b
	case canon.Null:
		return nil
	case canon.Array:
		out := make([]any, 0, len(v.Elems()))
		for _, e := range v.Elems() {
			out = append(out, paramValue(e))
		}
		return out
	case canon.Object:
		return ParamsOf(v)
	}
	return v // a number
}
