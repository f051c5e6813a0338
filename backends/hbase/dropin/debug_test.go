package dropin

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/tsuna/gohbase/hrpc"
	"github.com/tsuna/gohbase/region"

	"github.com/brine-kv/brine/backends/hbase"
)

// debugState is gohbase's debug state (client.MarshalJSON's members, in its order) of region clients
// each holding the regions listed, every region also in the key cache.
func debugState(t *testing.T, clients map[string][]hrpc.RegionInfo) []byte {
	t.Helper()
	infos := map[string]hrpc.RegionInfo{}
	byKey := map[string]string{}
	byClient := map[string][]string{}
	clientMap := map[string]any{}
	for cl, regs := range clients {
		clientMap[cl] = map[string]string{"Addr": cl}
		byClient[cl] = []string{}
		for _, r := range regs {
			ptr := fmt.Sprintf("%p", r)
			infos[ptr], byKey[string(r.Name())] = r, ptr
			byClient[cl] = append(byClient[cl], ptr)
		}
	}
	b, err := json.Marshal(struct {
		ClientType        region.ClientType
		ClientRegionMap   map[string]any
		RegionInfoMap     map[string]hrpc.RegionInfo
		KeyRegionCache    map[string]string
		ClientRegionCache map[string][]string
		Done_Status       string
	}{region.RegionClient, clientMap, infos, byKey, byClient, "Not Closed"})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// DebugState leaves out the regions of brine's meta table, and a region client that held only such
// regions; everything else is gohbase's, in its order.
func TestDebugStateWithoutBrineTables(t *testing.T) {
	info := func(ns, table, start string) hrpc.RegionInfo {
		name := []byte(table + "," + start + ",1")
		return region.NewInfo(1, []byte(ns), []byte(table), name, []byte(start), nil)
	}
	meta := info("", hbase.MetaTable, "")
	metaDefault := info("default", hbase.MetaTable, "")
	hbaseMeta := info("hbase", "meta", "")
	user, user2 := info("", "t", ""), info("", "t", "m")
	other := info("ns", hbase.MetaTable, "") // another namespace's table of that name is the program's
	cases := []struct {
		name       string
		state, out map[string][]hrpc.RegionInfo
	}{
		{"no brine table", map[string][]hrpc.RegionInfo{"rs1": {hbaseMeta, user}}, map[string][]hrpc.RegionInfo{"rs1": {hbaseMeta, user}}},
		{"meta table beside others", map[string][]hrpc.RegionInfo{"rs1": {hbaseMeta, user, meta}},
			map[string][]hrpc.RegionInfo{"rs1": {hbaseMeta, user}}},
		{"default namespace spelt out", map[string][]hrpc.RegionInfo{"rs1": {user, metaDefault}}, map[string][]hrpc.RegionInfo{"rs1": {user}}},
		{"server of the meta table alone", map[string][]hrpc.RegionInfo{"rs1": {hbaseMeta, user}, "rs2": {meta}, "rs3": {}},
			map[string][]hrpc.RegionInfo{"rs1": {hbaseMeta, user}, "rs3": {}}},
		{"same name, other namespace", map[string][]hrpc.RegionInfo{"rs1": {user, user2, other}},
			map[string][]hrpc.RegionInfo{"rs1": {user, user2, other}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := withoutRegionsOf(debugState(t, tc.state), hbase.MetaTable)
			if err != nil {
				t.Fatal(err)
			}
			var g, w map[string]any
			if err := json.Unmarshal(got, &g); err != nil {
				t.Fatalf("%v: %s", err, got)
			}
			if err := json.Unmarshal(debugState(t, tc.out), &w); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(g, w) {
				t.Fatalf("got  %s\nwant %s", got, debugState(t, tc.out))
			}
			gf, err := jsonFields(got)
			if err != nil {
				t.Fatal(err)
			}
			wf, _ := jsonFields(debugState(t, tc.out))
			for i := range wf {
				if gf[i].name != wf[i].name {
					t.Fatalf("member %d is %s, want %s (gohbase's order)", i, gf[i].name, wf[i].name)
				}
			}
		})
	}
}
