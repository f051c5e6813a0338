package salting_test

import (
	"fmt"

	"github.com/brine-kv/brine/keys"
	"github.com/brine-kv/brine/salting"
)

// The guides' [md5(userid)[0:4]][userid][orderid] with a 6-byte userid.
func ExampleParseSpec() {
	s, err := salting.ParseSpec("md5hex:4:prefix=6")
	if err != nil {
		panic(err)
	}
	p, _ := s.AppendPhysical(nil, []byte("200001order-17"))
	fmt.Printf("%s %d buckets\n", p, s.Buckets())
	// Output: ee8f200001order-17 65536 buckets
}

// Salting composite keys by their first field: all rows of one user share a bucket, so a scan of
// that user touches one bucket only.
func ExampleParseSpec_fields() {
	schema, _ := keys.ParseSchema("user,ts:int64:desc")
	s, _ := salting.ParseSpec("hash:16:fields=1")
	start, end, _ := schema.PrefixRange("user42")
	ranges, _ := s.BucketRanges(start, end)
	k, _ := schema.Encode("user42", int64(1700000000000))
	b, _ := s.Bucket(k)
	fmt.Println(len(ranges), ranges[0].Bucket == b)
	// Output: 1 true
}
