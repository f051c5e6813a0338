package dropin

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"github.com/tsuna/gohbase"

	"github.com/brine-kv/brine/backends/hbase"
)

// CacheRegions loads every region of table into the region cache of the gohbase client underneath,
// as gohbase's CacheRegions does. A salted table is one HBase table holding every bucket, so its
// regions are the logical table's.
func (c *Client) CacheRegions(table []byte) error {
	ctx := context.Background() // gohbase's CacheRegions takes no context either
	if err := c.begin(ctx); err != nil {
		return err
	}
	return c.asGohbase(ctx, c.inner.CacheRegions(table))
}

// MarshalJSON is gohbase.DebugState of the gohbase client underneath (a NewClient client connects
// first), so that gohbase.DebugState(c) shows the region and connection caches that c uses, less the
// regions of brine's own table, hbase.MetaTable: the drop-in reads the tables' stored specs there
// through that client, which a gohbase program never does (see withoutRegionsOf).
func (c *Client) MarshalJSON() ([]byte, error) {
	if err := c.begin(context.Background()); err != nil {
		return nil, err
	}
	b, err := gohbase.DebugState(c.inner)
	if err != nil {
		return nil, fmt.Errorf("dropin: debug state: %w", err)
	}
	if b, err = withoutRegionsOf(b, hbase.MetaTable); err != nil {
		return nil, fmt.Errorf("dropin: debug state: %w", err)
	}
	return b, nil
}

// withoutRegionsOf is gohbase's debug state (client.MarshalJSON) without the regions of table (of
// the default namespace): out of RegionInfoMap, KeyRegionCache and each region client's list in
// ClientRegionCache, and a region client whose every region was one of them out of ClientRegionCache
// and ClientRegionMap (a gohbase program would not have connected to it). The rest is unchanged, in
// gohbase's order.
func withoutRegionsOf(state []byte, table string) ([]byte, error) {
	fields, err := jsonFields(state)
	if err != nil {
		return nil, err
	}
	var regions map[string]json.RawMessage
	if err := json.Unmarshal(fields.get("RegionInfoMap"), &regions); err != nil {
		return nil, fmt.Errorf("RegionInfoMap: %w", err)
	}
	hidden := map[string]bool{}
	for ptr, raw := range regions {
		var r struct{ Namespace, Table string } // quoted, as gohbase's RegionInfo.MarshalJSON writes them
		if err := json.Unmarshal(raw, &r); err != nil {
			return nil, fmt.Errorf("RegionInfoMap: %w", err)
		}
		ns, _ := strconv.Unquote(r.Namespace)
		name, _ := strconv.Unquote(r.Table)
		if name == table && (ns == "" || ns == "default") {
			hidden[ptr] = true
			delete(regions, ptr)
		}
	}
	if len(hidden) == 0 {
		return state, nil
	}
	var byKey map[string]string
	var byClient map[string][]string
	var clients map[string]json.RawMessage
	for _, f := range []struct {
		name string
		v    any
	}{{"KeyRegionCache", &byKey}, {"ClientRegionCache", &byClient}, {"ClientRegionMap", &clients}} {
		if err := json.Unmarshal(fields.get(f.name), f.v); err != nil {
			return nil, fmt.Errorf("%s: %w", f.name, err)
		}
	}
	for k, ptr := range byKey {
		if hidden[ptr] {
			delete(byKey, k)
		}
	}
	for cl, ptrs := range byClient {
		kept := slices.DeleteFunc(slices.Clone(ptrs), func(p string) bool { return hidden[p] })
		if len(kept) == 0 && len(ptrs) > 0 {
			delete(byClient, cl)
			delete(clients, cl)
			continue
		}
		byClient[cl] = kept
	}
	for name, v := range map[string]any{"RegionInfoMap": regions, "KeyRegionCache": byKey,
		"ClientRegionCache": byClient, "ClientRegionMap": clients} {
		if err := fields.set(name, v); err != nil {
			return nil, err
		}
	}
	return fields.marshal(), nil
}

// objectFields is a JSON object's members in their order.
type objectFields []struct {
	name  string
	value json.RawMessage
}

func jsonFields(b []byte) (objectFields, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("not a JSON object (%v)", err)
	}
	var fields objectFields
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		name, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		fields = append(fields, struct {
			name  string
			value json.RawMessage
		}{name, v})
	}
	return fields, nil
}

// get is the member's value; JSON null if there is none.
func (o objectFields) get(name string) json.RawMessage {
	for _, f := range o {
		if f.name == name {
			return f.value
		}
	}
	return json.RawMessage("null")
}

func (o objectFields) set(name string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	for i := range o {
		if o[i].name == name {
			o[i].value = b
		}
	}
	return nil
}

func (o objectFields) marshal() []byte {
	out := []byte{'{'}
	for i, f := range o {
		if i > 0 {
			out = append(out, ',')
		}
		name, _ := json.Marshal(f.name)
		out = append(append(append(out, name...), ':'), f.value...)
	}
	return append(out, '}')
}
