package periods_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/salting"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func mustSalter(t testing.TB, spec string) salting.Salter {
	t.Helper()
	s, err := salting.ParseSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func cell(v string) client.Cell {
	return client.Cell{Family: "d", Qualifier: "q", Value: []byte(v), Timestamp: 1}
}
