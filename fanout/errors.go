package fanout

import "fmt"

// StreamError is a merge's error from one of its streams: which stream, and what it returned. A
// caller whose streams all ask the same question (one per bucket of one range) unwraps it when the
// stream number means nothing to its user, as when every stream would refuse the same bad input.
type StreamError struct {
	Stream int   // the stream's index among the merge's streams
	Err    error // the stream's own error
}

func (e *StreamError) Error() string { return fmt.Sprintf("stream %d: %v", e.Stream, e.Err) }

// Unwrap returns the stream's own error, for errors.Is and errors.As.
func (e *StreamError) Unwrap() error { return e.Err }
