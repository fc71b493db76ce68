package outbound

import (
	"fmt"
	"io"
	"net/http"
)

// LimitBodies wraps rt so that reading more than max bytes of any
// response body fails: a party we call (an identity provider's discovery
// document, key set or token answer) cannot make us buffer without bound,
// whatever library reads the body.
func LimitBodies(rt http.RoundTripper, max int64) http.RoundTripper {
	return limitBodies{rt: rt, max: max}
}

type limitBodies struct {
	rt  http.RoundTripper
	max int64
}

func (l limitBodies) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := l.rt.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	resp.Body = &cappedBody{rc: resp.Body, left: l.max, max: l.max}
	return resp, nil
}

// cappedBody reads rc until max bytes were read, then fails.
type cappedBody struct {
	rc   io.ReadCloser
	left int64
	max  int64
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// One byte more tells a body of exactly max bytes from a longer one.
		var one [1]byte
		if n, _ := b.rc.Read(one[:]); n > 0 {
			return 0, fmt.Errorf("response body over %d bytes", b.max)
		}
		return 0, io.EOF
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *cappedBody) Close() error { return b.rc.Close() }
