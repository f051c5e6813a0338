package tablestoretest_test

import (
	"bytes"
	"crypto/md5"
	"encoding/base64"
	"net/http"
	"testing"
	"time"

	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"
	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore/otsprotocol"
	"github.com/brine-kv/brine/backends/tablestore/tablestoretest"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/protoadapt"
)

func TestAuthentication(t *testing.T) {
	srv := tablestoretest.Start(t, tablestoretest.WithCredentials("my-id", "my-secret"),
		tablestoretest.WithInstance("inst"), tablestoretest.WithSecurityToken("sts"))
	good := tablestore.NewClientWithConfig(srv.Endpoint(), "inst", "my-id", "my-secret", "sts", noRetry())
	if _, err := good.ListTable(); err != nil {
		t.Fatalf("good credentials rejected: %v", err)
	}
	tests := []struct {
		name, instance, id, secret, token, message string
	}{
		{"wrong secret", "inst", "my-id", "nope", "sts", "Signature mismatch."},
		{"wrong key id", "inst", "other", "my-secret", "sts", "The AccessKeyID does not exist."},
		{"wrong instance", "other", "my-id", "my-secret", "sts", "The instance is not found."},
		{"missing token", "inst", "my-id", "my-secret", "", "The security token is invalid."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := tablestore.NewClientWithConfig(srv.Endpoint(), tc.instance, tc.id, tc.secret, tc.token, noRetry())
			_, err := c.ListTable()
			oe := wantCode(t, err, "OTSAuthFailed", 403)
			if oe.Message != tc.message {
				t.Errorf("message = %q, want %q", oe.Message, tc.message)
			}
			if oe.RequestId == "" {
				t.Error("no request id")
			}
		})
	}
	// OTSAuthFailed is not retryable: a default client fails after one request.
	srv.ResetStats()
	bad := tablestore.NewClientWithConfig(srv.Endpoint(), "inst", "my-id", "nope", "sts", nil)
	_, err := bad.ListTable()
	wantCode(t, err, "OTSAuthFailed", 403)
	if n := srv.Stats()["ListTable"].Requests; n != 1 {
		t.Errorf("requests = %d, want 1", n)
	}
}

// TestRawHTTPValidation sends hand-made requests for what the SDK never gets wrong.
func TestRawHTTPValidation(t *testing.T) {
	srv := tablestoretest.Start(t)
	body, _ := proto.Marshal(protoadapt.MessageV2Of(&otsprotocol.DescribeTableRequest{TableName: proto.String("x")}))
	sum := md5.Sum(body)
	headers := func() http.Header {
		h := http.Header{}
		h.Set("x-ots-date", time.Now().UTC().Format("2006-01-02T15:04:05.123Z"))
		h.Set("x-ots-apiversion", "2015-12-31")
		h.Set("x-ots-accesskeyid", srv.AccessKeyID())
		h.Set("x-ots-instancename", srv.Instance())
		h.Set("x-ots-contentmd5", base64.StdEncoding.EncodeToString(sum[:]))
		h.Set("x-ots-signature", "bogus")
		return h
	}
	tests := []struct {
		name    string
		method  string
		path    string
		edit    func(http.Header)
		body    []byte
		status  int
		code    string
		message string
	}{
		{"GET", http.MethodGet, "/DescribeTable", nil, body, 405, "OTSMethodNotAllowed", ""},
		{"unknown op", http.MethodPost, "/Frobnicate", nil, body, 400, "OTSParameterInvalid", "Unsupported operation: 'Frobnicate'."},
		{"unimplemented op", http.MethodPost, "/CreateSearchIndex", nil, body, 400, "OTSParameterInvalid", ""},
		{"missing date", http.MethodPost, "/DescribeTable", func(h http.Header) { h.Del("x-ots-date") }, body, 400, "OTSParameterInvalid", "Missing header: 'x-ots-date'."},
		{"missing signature", http.MethodPost, "/DescribeTable", func(h http.Header) { h.Del("x-ots-signature") }, body, 400, "OTSParameterInvalid", "Missing header: 'x-ots-signature'."},
		{"bad date", http.MethodPost, "/DescribeTable", func(h http.Header) { h.Set("x-ots-date", "yesterday") }, body, 400, "OTSParameterInvalid", ""},
		{"stale date", http.MethodPost, "/DescribeTable", func(h http.Header) {
			h.Set("x-ots-date", time.Now().Add(-time.Hour).UTC().Format("2006-01-02T15:04:05.123Z"))
		}, body, 403, "OTSAuthFailed", ""},
		{"md5 mismatch", http.MethodPost, "/DescribeTable", nil, append(bytes.Clone(body), 0), 403, "OTSAuthFailed",
			"Mismatch between MD5 value of request body and x-ots-contentmd5 in header."},
		{"bad signature", http.MethodPost, "/DescribeTable", nil, body, 403, "OTSAuthFailed", "Signature mismatch."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, srv.Endpoint()+tc.path, bytes.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header = headers()
			if tc.edit != nil {
				tc.edit(req.Header)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var buf bytes.Buffer
			_, _ = buf.ReadFrom(resp.Body)
			var e otsprotocol.Error
			if err := proto.Unmarshal(buf.Bytes(), protoadapt.MessageV2Of(&e)); err != nil {
				t.Fatalf("error body: %v", err)
			}
			if resp.StatusCode != tc.status || e.GetCode() != tc.code {
				t.Errorf("got %d %s %q, want %d %s", resp.StatusCode, e.GetCode(), e.GetMessage(), tc.status, tc.code)
			}
			if tc.message != "" && e.GetMessage() != tc.message {
				t.Errorf("message = %q, want %q", e.GetMessage(), tc.message)
			}
			if resp.Header.Get("x-ots-requestid") == "" {
				t.Error("no x-ots-requestid")
			}
		})
	}
}
