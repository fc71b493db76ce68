package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"
)

// totpSteps is the totp_step target's state: per account, a session that
// owes its second factor and the account's TOTP secret.
type totpSteps struct {
	url      string
	pending  []string // access tokens owing the factor
	secrets  []string
	next     atomic.Int64
	notOwing atomic.Int64 // 2xx answers still carrying mfa: none expected
}

func (s *totpSteps) notes() (info, problems []string) {
	used := min(int(s.next.Load()), len(s.pending))
	info = []string{fmt.Sprintf("%d accounts with a TOTP factor, each signed in once beforehand; %d took the step during the run", len(s.pending), used)}
	if n := s.notOwing.Load(); n > 0 {
		problems = append(problems, fmt.Sprintf("%d steps answered a session still owing the factor", n))
	}
	return info, problems
}

var benchTOTP = totp.ValidateOpts{Period: 30, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1}

// totpStepTarget measures "POST /v1/auth/mfa" with a right TOTP code. A
// code is single use and a session takes the step once, so each request
// spends one account's session and time step: the accounts (registered,
// enrolled, confirmed with the previous step's code and signed in, all
// through the API before the timer) run out and the target ends.
func totpStepTarget() target {
	t := newTarget("totp_step", setupTOTPSteps,
		func(_ int, s *totpSteps) (*http.Request, error) {
			i := s.next.Add(1) - 1
			if i >= int64(len(s.pending)) {
				return nil, errExhausted
			}
			code, err := totp.GenerateCodeCustom(s.secrets[i], time.Now(), benchTOTP)
			if err != nil {
				return nil, err
			}
			body, err := json.Marshal(map[string]string{"method": "totp", "code": code})
			if err != nil {
				return nil, err
			}
			req, err := postJSON(s.url, body)
			if err == nil {
				req.Header.Set("Authorization", "Bearer "+s.pending[i])
			}
			return req, err
		},
		func(_ int, s *totpSteps, status int, body []byte) {
			var a struct {
				MFA json.RawMessage `json:"mfa"`
			}
			if status/100 == 2 && (json.Unmarshal(body, &a) != nil || len(a.MFA) > 0) {
				s.notOwing.Add(1)
			}
		})
	t.finite = true
	return t
}

func setupTOTPSteps(ctx context.Context, e *env) (*totpSteps, error) {
	n := e.mfaUsers
	s := &totpSteps{url: e.baseURL + "/v1/auth/mfa", pending: make([]string, n), secrets: make([]string, n)}
	e.logf("registering %d users with a TOTP factor for totp_step", n)
	began := time.Now()
	// No digits or hex in the password: the policy refuses one holding a
	// part of the address (its tag and number).
	pw, tag := "wintry-gazebo-quorum-plinth", randomHex(4)
	err := parallel(ctx, n, 8, func(i int) error {
		bu := &benchUser{email: fmt.Sprintf("bench-mfa-%s-%d@example.com", tag, i), password: pw}
		if err := register(ctx, e.client, e.baseURL, bu); err != nil {
			return err
		}
		secret, err := enrolTOTP(ctx, e, bu.session.AccessToken)
		if err != nil {
			return err
		}
		sess, err := login(ctx, e.client, e.baseURL, bu)
		s.pending[i], s.secrets[i] = sess.AccessToken, secret
		return err
	})
	if err != nil {
		if why, ok := missingRoute(err); ok {
			return nil, skipf("%s: two-factor is not in this build", why)
		}
		return nil, err
	}
	e.logf("totp_step: %d users ready in %v", n, time.Since(began).Round(time.Second))
	return s, nil
}

// enrolTOTP sets up a TOTP factor with the access token and returns its
// secret; it confirms with the previous step's code, so that the step's
// code of the run is a later one.
func enrolTOTP(ctx context.Context, e *env, token string) (string, error) {
	var en struct {
		Factor struct {
			ID string `json:"id"`
		} `json:"factor"`
		Secret string `json:"secret"`
	}
	if err := callAs(ctx, e.client, http.MethodPost, e.baseURL+"/v1/me/factors/totp", token, nil, &en); err != nil {
		return "", err
	}
	// A busy machine may cross a step boundary between the code and its
	// check: try again with a fresh code (a failure confirms nothing).
	for try := 1; ; try++ {
		code, err := totp.GenerateCodeCustom(en.Secret, time.Now().Add(-30*time.Second), benchTOTP)
		if err != nil {
			return "", err
		}
		err = callAs(ctx, e.client, http.MethodPost, e.baseURL+"/v1/me/factors/"+en.Factor.ID+"/confirm", token, map[string]string{"code": code}, nil)
		if err == nil || try == 3 {
			return en.Secret, err
		}
	}
}
