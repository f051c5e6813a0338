package keys_test

import (
	"bytes"
	"fmt"

	"github.com/brine-kv/brine/keys"
)

// The Lindorm guide's newest-first log key, [hostname][log-event][Long.MAX_VALUE - timestamp].
func ExampleParseSchema() {
	s, err := keys.ParseSchema("hostname,event,ts:int64:desc")
	if err != nil {
		panic(err)
	}
	older, _ := s.Encode("host1", "cpu", int64(1700000000000))
	newer, _ := s.Encode("host1", "cpu", int64(1700000060000))
	other, _ := s.Encode("host12", "cpu", int64(1700000000000))
	start, end, _ := s.PrefixRange("host1")
	in := func(k []byte) bool { return bytes.Compare(k, start) >= 0 && bytes.Compare(k, end) < 0 }
	fmt.Println("newest first:", bytes.Compare(newer, older) < 0)
	fmt.Println("host1 range holds host1:", in(older), "host12:", in(other))
	vals, _ := s.Decode(newer)
	fmt.Println(vals...)
	// Output:
	// newest first: true
	// host1 range holds host1: true host12: false
	// host1 cpu 1700000060000
}

// The Tablestore guide's concatenated partition key [DeviceID,SellerID,CardID].
func ExampleParseJoined() {
	j, err := keys.ParseJoined("sep=0x2c,device:digits=6,seller,card")
	if err != nil {
		panic(err)
	}
	k, _ := j.Encode(54, "a1001", "6777")
	fmt.Printf("%s\n", k)
	// Output: 000054,a1001,6777
}
