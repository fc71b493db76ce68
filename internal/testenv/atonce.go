package testenv

import "sync"

// AtOnce calls fn(0) … fn(n-1) from n goroutines released at the same moment
// and returns when all have returned, so that tests of concurrent requests
// or store calls race as closely as they can. fn records its own results.
func AtOnce(n int, fn func(i int)) {
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			fn(i)
		}()
	}
	close(start)
	wg.Wait()
}

// AtOnceAnswers is AtOnce for requests: it returns the answer of each
// call of fn, in call order.
func AtOnceAnswers(n int, fn func(i int) *Resp) []*Resp {
	out := make([]*Resp, n)
	AtOnce(n, func(i int) { out[i] = fn(i) })
	return out
}
