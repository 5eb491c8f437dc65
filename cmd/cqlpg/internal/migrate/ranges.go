package migrate

import (
	"context"
	"fmt"
	"math"
	"sync"
)

// RangeOptions are what a job over the token ring's ranges shares.
type RangeOptions struct {
	// Parallel is the number of ranges worked on at once.
	Parallel int
	// Splits is the number of equal token ranges the ring is cut into.
	Splits int
	// PageSize is the rows per page read, and per write.
	PageSize int
}

func (o *RangeOptions) setDefaults() {
	if o.Parallel <= 0 {
		o.Parallel = 4
	}
	if o.Splits <= 0 {
		o.Splits = 256
	}
	if o.PageSize <= 0 {
		o.PageSize = 1000
	}
}

// rangeBounds returns the ends of range i of n equal cuts of the ring:
// (start, end], the first including the ring's least token.
func rangeBounds(i, n int) (start, end int64) {
	step := uint64(math.MaxUint64) / uint64(n)
	start = math.MinInt64 + int64(uint64(i)*step)
	end = math.MinInt64 + int64(uint64(i+1)*step)
	if i == n-1 {
		end = math.MaxInt64
	}
	return start, end
}

// forRanges works on each range of opts.Splits that skip does not name,
// opts.Parallel at once. Each worker gets its own state from open: the
// function working on one range, and one to close it. The first error
// stops the others and is returned, naming its range (table names the
// job in it).
func forRanges(ctx context.Context, opts RangeOptions, table string, skip func(int) bool,
	open func() (work func(ctx context.Context, i int) error, close func(), err error)) error {
	var (
		mu       sync.Mutex
		firstErr error
		wg       sync.WaitGroup
	)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	fail := func(err error) {
		mu.Lock()
		if firstErr == nil {
			firstErr = err
		}
		mu.Unlock()
		cancel()
	}
	ranges := make(chan int)
	for range opts.Parallel {
		work, closeWorker, err := open()
		if err != nil {
			fail(err)
			break
		}
		wg.Go(func() {
			defer closeWorker()
			for i := range ranges {
				if err := work(ctx, i); err != nil {
					fail(fmt.Errorf("%s: token range %d of %d: %w", table, i+1, opts.Splits, err))
					return
				}
			}
		})
	}
feed:
	for i := range opts.Splits {
		if skip != nil && skip(i) {
			continue
		}
		select {
		case ranges <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(ranges)
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	return ctx.Err()
}
