package main

import (
	"strings"
	"sync"
	"testing"
	"time"
)

func TestDeleteRangeIsConsumedOnceAndToppedUp(t *testing.T) {
	r := newIDRange(deleteRanges)
	from, to := r.topUp(2 * time.Second)
	if from != deleteRanges || to != deleteRanges+2*deleteRateBound {
		t.Fatalf("first top-up [%d, %d), want %d ids from %d", from, to, 2*deleteRateBound, deleteRanges)
	}
	r.loaded, r.start = to, r.next.Load()
	seen := sync.Map{}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 25_000 {
				if _, dup := seen.LoadOrStore(r.take(), true); dup {
					t.Error("an id was taken twice")
					return
				}
			}
		})
	}
	wg.Wait()
	if err := r.check(); err != nil {
		t.Fatal(err)
	}
	// The run took all 200000: the next one gets twice that.
	if from, to := r.topUp(time.Second); from != r.loaded || to != r.next.Load()+2*200_000 {
		t.Errorf("top-up [%d, %d), want twice the last run's 200000 ids ahead of %d", from, to, r.next.Load())
	}
	r.take()
	if err := r.check(); err == nil || !strings.Contains(err.Error(), "ran out") {
		t.Errorf("check past the loaded ids: %v", err)
	}
}

func TestScenarioIDsHitThePreloadedPlants(t *testing.T) {
	const rows = 1000
	for _, sc := range scenarios {
		if sc.id == nil {
			continue // deliver: no requests
		}
		for range 10_000 {
			id := sc.id(rows, newIDRange(deleteRanges))
			switch sc.name {
			case "create", "create+hook", "lag":
				if id < freshIDs {
					t.Fatalf("create id %d among the stored ones", id)
				}
			case "get", "get-not-modified", "change":
				if id < 1 || id > rows {
					t.Fatalf("get id %d not stored", id)
				}
			case "list":
				if id < 0 || id+listLimit > rows {
					t.Fatalf("list after %d gives a page short of %d", id, listLimit)
				}
			}
		}
	}
}
