package tablestoretest

import (
	"crypto/hmac"
	"crypto/md5"
	"crypto/rand"
	"crypto/sha1"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"
	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore/otsprotocol"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/protoadapt"
)

// Defaults for a new server.
const (
	DefaultInstance        = "brinetest"
	DefaultAccessKeyID     = "test-access-key-id"
	DefaultAccessKeySecret = "test-access-key-secret"

	apiVersion = "2015-12-31"
)

// Limits are the service limits the server enforces. Zero fields take the
// service's values (DefaultLimits).
type Limits struct {
	PageRows         int // GetRange rows per response
	PageBytes        int // GetRange data bytes per response
	BatchWriteRows   int
	BatchWriteBytes  int
	BatchGetRows     int
	RowBytes         int // one PutRow/UpdateRow
	PKValueBytes     int // one STRING/BINARY primary-key value
	AttrValueBytes   int // one STRING/BINARY attribute value
	ColumnsToGet     int
	ColumnsPerWrite  int // attribute cells in one row change
	PKColumns        int
	Tables           int // tables per instance
	RequestBodyBytes int // larger bodies are refused with 413
	ClockSkew        time.Duration
}

// DefaultLimits returns the service's published limits.
func DefaultLimits() Limits {
	return Limits{
		PageRows:         5000,
		PageBytes:        4 << 20,
		BatchWriteRows:   200,
		BatchWriteBytes:  4 << 20,
		BatchGetRows:     100,
		RowBytes:         4 << 20,
		PKValueBytes:     1024,
		AttrValueBytes:   2 << 20,
		ColumnsToGet:     128,
		ColumnsPerWrite:  1024,
		PKColumns:        4,
		Tables:           64,
		RequestBodyBytes: 8 << 20,
		ClockSkew:        15 * time.Minute,
	}
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	fill := func(v *int, def int) {
		if *v <= 0 {
			*v = def
		}
	}
	fill(&l.PageRows, d.PageRows)
	fill(&l.PageBytes, d.PageBytes)
	fill(&l.BatchWriteRows, d.BatchWriteRows)
	fill(&l.BatchWriteBytes, d.BatchWriteBytes)
	fill(&l.BatchGetRows, d.BatchGetRows)
	fill(&l.RowBytes, d.RowBytes)
	fill(&l.PKValueBytes, d.PKValueBytes)
	fill(&l.AttrValueBytes, d.AttrValueBytes)
	fill(&l.ColumnsToGet, d.ColumnsToGet)
	fill(&l.ColumnsPerWrite, d.ColumnsPerWrite)
	fill(&l.PKColumns, d.PKColumns)
	fill(&l.Tables, d.Tables)
	fill(&l.RequestBodyBytes, d.RequestBodyBytes)
	if l.ClockSkew <= 0 {
		l.ClockSkew = d.ClockSkew
	}
	return l
}

// Option configures a Server.
type Option func(*Server)

// WithInstance sets the instance name requests must carry in x-ots-instancename.
func WithInstance(name string) Option { return func(s *Server) { s.instance = name } }

// WithCredentials sets the access key pair the server verifies signatures with.
func WithCredentials(id, secret string) Option {
	return func(s *Server) { s.akID, s.akSecret = id, secret }
}

// WithSecurityToken makes the server require this STS token in x-ots-ststoken.
func WithSecurityToken(token string) Option { return func(s *Server) { s.stsToken = token } }

// WithLimits overrides service limits; zero fields keep the defaults.
func WithLimits(l Limits) Option { return func(s *Server) { s.limits = l.withDefaults() } }

// WithPageCap sets the GetRange page cap (rows and bytes per response); tests use a
// small cap to exercise pagination cheaply.
func WithPageCap(rows, bytes int) Option {
	return func(s *Server) {
		s.limits.PageRows, s.limits.PageBytes = rows, bytes
		s.limits = s.limits.withDefaults()
	}
}

// WithClock sets the clock used for cell timestamps, TTL and timestamp deviation
// checks (not for the x-ots-date skew check, which follows the wall clock).
func WithClock(now func() time.Time) Option { return func(s *Server) { s.now = now } }

// WithLogger sets the logger; by default the server logs nothing.
func WithLogger(l *slog.Logger) Option { return func(s *Server) { s.log = l } }

// WithoutAuth disables credential checks (signature, access key, instance, STS
// token); header presence and body MD5 are still verified.
func WithoutAuth() Option { return func(s *Server) { s.noAuth = true } }

// Server is a local Tablestore endpoint speaking the service's wire protocol
// (protobuf over HTTP, PlainBuffer rows, signed headers) backed by in-memory
// B-trees. It is an http.Handler; NewServer and Start also listen on loopback.
// All methods are safe for concurrent use.
type Server struct {
	instance, akID, akSecret, stsToken string
	noAuth                             bool
	limits                             Limits
	now                                func() time.Time
	log                                *slog.Logger

	mu     sync.RWMutex // guards tables and their rows
	tables map[string]*table

	faults faultState
	stats  statsState

	httpSrv *httptest.Server
}

// New returns a server that is not listening: use it as an http.Handler (for
// example from a CLI) or call NewServer to get a loopback listener as well.
func New(opts ...Option) *Server {
	s := &Server{
		instance: DefaultInstance,
		akID:     DefaultAccessKeyID,
		akSecret: DefaultAccessKeySecret,
		limits:   DefaultLimits(),
		now:      time.Now,
		log:      slog.New(slog.DiscardHandler),
		tables:   make(map[string]*table),
	}
	for _, o := range opts {
		o(s)
	}
	s.stats.init()
	return s
}

// NewServer returns a server listening on 127.0.0.1 at a random port.
func NewServer(opts ...Option) *Server {
	s := New(opts...)
	s.httpSrv = httptest.NewServer(s)
	return s
}

// Start is NewServer for tests: the server is closed when the test ends.
func Start(t testing.TB, opts ...Option) *Server {
	t.Helper()
	s := NewServer(opts...)
	t.Cleanup(s.Close)
	return s
}

// Close stops the listener started by NewServer or Start.
func (s *Server) Close() {
	if s.httpSrv != nil {
		s.httpSrv.Close()
	}
}

// Endpoint returns the base URL clients pass to tablestore.NewClient ("" when the
// server was made with New and is served elsewhere).
func (s *Server) Endpoint() string {
	if s.httpSrv == nil {
		return ""
	}
	return s.httpSrv.URL
}

// Instance returns the instance name clients must use.
func (s *Server) Instance() string { return s.instance }

// AccessKeyID returns the access key ID clients must use.
func (s *Server) AccessKeyID() string { return s.akID }

// AccessKeySecret returns the secret clients must sign with.
func (s *Server) AccessKeySecret() string { return s.akSecret }

// SecurityToken returns the STS token the server requires ("" for none).
func (s *Server) SecurityToken() string { return s.stsToken }

// Limits returns the limits in force.
func (s *Server) Limits() Limits { return s.limits }

// NewClient returns an SDK client for this server. A nil config means the SDK's
// defaults, including its own retries of retryable errors (about 10 tries in 5 s);
// pass a config with RetryTimes 0 to see injected errors directly.
func (s *Server) NewClient(config *tablestore.TableStoreConfig) *tablestore.TableStoreClient {
	return tablestore.NewClientWithConfig(s.Endpoint(), s.instance, s.akID, s.akSecret, s.stsToken, config)
}

// Reset drops every table.
func (s *Server) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tables = make(map[string]*table)
}

// handler runs one decoded request; it returns the response message or an error.
type handler struct {
	newReq func() protoadapt.MessageV1
	run    func(s *Server, req protoadapt.MessageV1, rc *reqCtx) (protoadapt.MessageV1, *otsError)
}

// reqCtx carries per-request state: the operation name (for stats and row
// faults) and the request time.
type reqCtx struct {
	op  string
	now time.Time
}

func (s *Server) handlers(op string) (handler, bool) {
	switch op {
	case "CreateTable":
		return handler{func() protoadapt.MessageV1 { return &otsprotocol.CreateTableRequest{} }, (*Server).createTable}, true
	case "ListTable":
		return handler{func() protoadapt.MessageV1 { return &otsprotocol.ListTableRequest{} }, (*Server).listTable}, true
	case "DescribeTable":
		return handler{func() protoadapt.MessageV1 { return &otsprotocol.DescribeTableRequest{} }, (*Server).describeTable}, true
	case "UpdateTable":
		return handler{func() protoadapt.MessageV1 { return &otsprotocol.UpdateTableRequest{} }, (*Server).updateTable}, true
	case "DeleteTable":
		return handler{func() protoadapt.MessageV1 { return &otsprotocol.DeleteTableRequest{} }, (*Server).deleteTable}, true
	case "PutRow":
		return handler{func() protoadapt.MessageV1 { return &otsprotocol.PutRowRequest{} }, (*Server).putRow}, true
	case "GetRow":
		return handler{func() protoadapt.MessageV1 { return &otsprotocol.GetRowRequest{} }, (*Server).getRow}, true
	case "UpdateRow":
		return handler{func() protoadapt.MessageV1 { return &otsprotocol.UpdateRowRequest{} }, (*Server).updateRow}, true
	case "DeleteRow":
		return handler{func() protoadapt.MessageV1 { return &otsprotocol.DeleteRowRequest{} }, (*Server).deleteRow}, true
	case "BatchGetRow":
		return handler{func() protoadapt.MessageV1 { return &otsprotocol.BatchGetRowRequest{} }, (*Server).batchGetRow}, true
	case "BatchWriteRow":
		return handler{func() protoadapt.MessageV1 { return &otsprotocol.BatchWriteRowRequest{} }, (*Server).batchWriteRow}, true
	case "GetRange":
		return handler{func() protoadapt.MessageV1 { return &otsprotocol.GetRangeRequest{} }, (*Server).getRange}, true
	case "ComputeSplitPointsBySize":
		return handler{func() protoadapt.MessageV1 { return &otsprotocol.ComputeSplitPointsBySizeRequest{} }, (*Server).computeSplits}, true
	}
	return handler{}, false
}

// knownUnimplemented lists service operations this server recognises but does not
// model; they get a clear refusal instead of "unsupported operation".
func knownUnimplemented(op string) bool {
	switch op {
	case "ListStream", "DescribeStream", "GetShardIterator", "GetStreamRecord",
		"CreateIndex", "DropIndex", "Search", "CreateSearchIndex", "ListSearchIndex",
		"DeleteSearchIndex", "DescribeSearchIndex", "StartLocalTransaction",
		"CommitTransaction", "AbortTransaction", "SQLQuery", "ParallelScan", "ComputeSplits":
		return true
	}
	return false
}

// ServeHTTP implements the service endpoint: POST /{Operation}.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	reqID := newRequestID()
	w.Header().Set("x-ots-requestid", reqID)
	op := path.Base(r.URL.Path)
	start := time.Now()
	status, oerr := s.serve(w, r, op)
	if oerr != nil {
		s.writeError(w, oerr)
		status = oerr.status
		s.stats.failure(op)
	}
	s.log.Debug("tablestoretest request", "op", op, "status", status, "request_id", reqID,
		"error", errString(oerr), "elapsed", time.Since(start))
}

func errString(e *otsError) string {
	if e == nil {
		return ""
	}
	return e.Error()
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request, op string) (int, *otsError) {
	s.stats.request(op)
	if r.Method != http.MethodPost {
		return 0, newError(CodeMethodNotAllowed, "OTSMethodNotAllowedOnly POST method for requests is supported.")
	}
	h, ok := s.handlers(op)
	if !ok {
		if knownUnimplemented(op) {
			return 0, errUnsupported("Operation '" + op + "'")
		}
		return 0, errParam("Unsupported operation: '%s'.", op)
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, int64(s.limits.RequestBodyBytes)+1))
	if err != nil {
		return 0, newError(CodeRequestTimeout, "Request timeout.")
	}
	if len(body) > s.limits.RequestBodyBytes {
		return 0, newError(CodeRequestBodyTooLarge, "The size of POST data is too large.")
	}
	if oerr := s.authenticate(r, body); oerr != nil {
		return 0, oerr
	}
	req := h.newReq()
	if err := proto.Unmarshal(body, protoadapt.MessageV2Of(req)); err != nil {
		return 0, errParam("Parse PBMessage from RawString failed.")
	}
	fault := s.faults.requestFault(op, req)
	if fault != nil {
		if fault.Delay > 0 {
			time.Sleep(fault.Delay)
		}
		if !fault.AfterApply && fault.Code != "" {
			return 0, fault.err()
		}
	}
	rc := &reqCtx{op: op, now: s.now()}
	resp, oerr := h.run(s, req, rc)
	if oerr != nil {
		return 0, oerr
	}
	if fault != nil && fault.Code != "" {
		return 0, fault.err()
	}
	out, err := proto.Marshal(protoadapt.MessageV2Of(resp))
	if err != nil {
		// A missing required field is a bug here, not in the client.
		s.log.Error("tablestoretest: marshal response", "op", op, "error", err)
		return 0, newError(CodeInternalServerError, "Internal server error.")
	}
	s.writeOK(w, out)
	return http.StatusOK, nil
}

// authenticate checks what the service checks before looking at the body: the
// required x-ots-* headers, the instance and access key, the body MD5 and the
// HMAC-SHA1 signature over the canonical headers.
func (s *Server) authenticate(r *http.Request, body []byte) *otsError {
	for _, h := range []string{"x-ots-date", "x-ots-apiversion", "x-ots-accesskeyid", "x-ots-contentmd5",
		"x-ots-instancename", "x-ots-signature"} {
		if r.Header.Get(h) == "" {
			return errParam("Missing header: '%s'.", h)
		}
	}
	if v := r.Header.Get("x-ots-apiversion"); v != apiVersion {
		return errParam("Unsupported API version: '%s'.", v)
	}
	// The SDK formats x-ots-date with a literal ".123" for the fraction, so only
	// the part up to the seconds is meaningful.
	date := r.Header.Get("x-ots-date")
	if len(date) < 19 {
		return errParam("Invalid date format: %s.", date)
	}
	ts, err := time.Parse("2006-01-02T15:04:05", date[:19])
	if err != nil {
		return errParam("Invalid date format: %s.", date)
	}
	if d := time.Since(ts); d > s.limits.ClockSkew || d < -s.limits.ClockSkew {
		return newError(CodeAuthFailed, "Mismatch between system time and x-ots-date: %s.", date)
	}
	sum := md5.Sum(body)
	if r.Header.Get("x-ots-contentmd5") != base64.StdEncoding.EncodeToString(sum[:]) {
		return newError(CodeAuthFailed, "Mismatch between MD5 value of request body and x-ots-contentmd5 in header.")
	}
	if s.noAuth {
		return nil
	}
	if r.Header.Get("x-ots-instancename") != s.instance {
		return newError(CodeAuthFailed, "The instance is not found.")
	}
	if r.Header.Get("x-ots-accesskeyid") != s.akID {
		return newError(CodeAuthFailed, "The AccessKeyID does not exist.")
	}
	if s.stsToken != "" && r.Header.Get("x-ots-ststoken") != s.stsToken {
		return newError(CodeAuthFailed, "The security token is invalid.")
	}
	want := sign(s.akSecret, "/"+path.Base(r.URL.Path), r.Method, r.Header)
	if subtle.ConstantTimeCompare([]byte(want), []byte(r.Header.Get("x-ots-signature"))) != 1 {
		return newError(CodeAuthFailed, "Signature mismatch.")
	}
	return nil
}

// sign computes the request signature: base64(HMAC-SHA1(secret, uri + "\n" + method
// + "\n\n" + canonical headers)), the canonical headers being every x-ots-* header
// but the signature, lower-cased, sorted, as "name:value\n".
func sign(secret, uri, method string, h http.Header) string {
	var names []string
	for k := range h {
		lk := strings.ToLower(k)
		if strings.HasPrefix(lk, "x-ots-") && lk != "x-ots-signature" {
			names = append(names, lk)
		}
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString(uri + "\n" + method + "\n\n")
	for _, n := range names {
		b.WriteString(n + ":" + strings.TrimSpace(h.Get(n)) + "\n")
	}
	m := hmac.New(sha1.New, []byte(secret))
	m.Write([]byte(b.String()))
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

func (s *Server) writeOK(w http.ResponseWriter, body []byte) {
	sum := md5.Sum(body)
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.Header().Set("x-ots-contenttype", "protocol buffer")
	w.Header().Set("x-ots-contentmd5", base64.StdEncoding.EncodeToString(sum[:]))
	w.Header().Set("x-ots-date", time.Now().UTC().Format("2006-01-02T15:04:05.000Z"))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

func (s *Server) writeError(w http.ResponseWriter, e *otsError) {
	body, err := proto.Marshal(protoadapt.MessageV2Of(&otsprotocol.Error{Code: proto.String(e.code), Message: proto.String(e.message)}))
	if err != nil {
		body = []byte(e.Error())
	}
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.WriteHeader(e.status)
	_, _ = w.Write(body)
}

func newRequestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// lookup returns a table; callers hold s.mu.
func (s *Server) lookup(name string) (*table, *otsError) {
	t, ok := s.tables[name]
	if !ok {
		return nil, errTableNotExist()
	}
	return t, nil
}
