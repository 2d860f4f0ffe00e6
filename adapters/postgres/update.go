package postgres

import (
	"context"
	"fmt"

	"github.com/plantstore/plantstore/adapters/internal/traceparent"
	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

// maxUpdateAttempts bounds how often the updates of one id are decided
// again after another writer (another replica's batch) wrote the plant
// between their read and their write; each time means that writer's write
// took effect.
const maxUpdateAttempts = 8

// updating is what an update by function carries through the batch: the
// function, or the check of a conditional delete.
type updating struct {
	update application.Update
	check  application.Check
}

// updateKind is an update by function (UpdatePlant) or a conditional
// delete (DeletePlantIf). It never reaches a statement as it is: a segment
// reads the stored rows of its updates, applies the functions of each id in
// arrival order in Go, and writes what they decided with replaceKind or
// removeKind, over the version it read (applyUpdates). The updates of one
// id share a segment, applied one after the other; another kind of write
// of the id cuts it, and, as a kind that writes rows that exist, so does a
// plain delete of any id.
var updateKind = writeKind{name: "update", locks: true, shares: true}

// UpdatePlant stores update's answer for the plant stored under id, in one
// atomic step with reading what update saw. It returns only after the
// batch holding the write has committed.
func (s *Store) UpdatePlant(ctx context.Context, id domain.ID, update application.Update) (domain.Plant, error) {
	res, err := s.submit(ctx, write{kind: &updateKind, id: id, arg: updating{update: update}, trace: traceparent.From(ctx)})
	return res.plant, err
}

// DeletePlantIf deletes the plant stored under id when check allows it, in
// one atomic step with reading what check saw, and returns the plant
// deleted. It returns only after the batch holding the delete has
// committed.
func (s *Store) DeletePlantIf(ctx context.Context, id domain.ID, check application.Check) (domain.Plant, error) {
	res, err := s.submit(ctx, write{kind: &updateKind, id: id, arg: updating{check: check}, trace: traceparent.From(ctx)})
	return res.plant, err
}

// applyUpdates runs the updates batch[seg] and sets their answers in out.
// Each round reads the stored rows of the ids still pending, decides each
// id's updates on its row, and writes every id's decision in one statement
// of replacements and one of removals, each over the version it read. An id
// whose row another writer changed meanwhile is decided again on the new
// row in the next round.
func (s *Store) applyUpdates(ctx context.Context, batch []write, seg []int, out []result) {
	var ids []domain.ID
	chains := make(map[domain.ID][]int, len(seg)) // an id's updates, in arrival order
	for _, i := range seg {
		id := batch[i].id
		if chains[id] == nil {
			ids = append(ids, id)
		}
		chains[id] = append(chains[id], i)
	}
	for attempt := 0; attempt < maxUpdateAttempts && len(ids) > 0; attempt++ {
		rows, err := s.readRows(ctx, ids)
		if err != nil {
			failed := s.fail("update", err)
			for _, id := range ids {
				for _, i := range chains[id] {
					out[i] = result{Err: failed}
				}
			}
			return
		}
		replaces, removes := make([]write, 0, len(ids)), []write(nil)
		for _, id := range ids {
			row, found := rows[id]
			if w, ok := s.decide(batch, chains[id], row, found, out); ok {
				if w.kind == &removeKind {
					removes = append(removes, w)
				} else {
					replaces = append(replaces, w)
				}
			}
		}
		var again []domain.ID
		for _, ws := range [][]write{replaces, removes} {
			if len(ws) == 0 {
				continue
			}
			for k, res := range s.applyAll(ctx, ws) {
				chain := chains[ws[k].id]
				switch {
				case res.Err != nil:
					for _, i := range chain {
						out[i] = result{Err: res.Err}
					}
				case !res.Value.done:
					again = append(again, ws[k].id)
				}
			}
		}
		ids = again
	}
	for _, id := range ids {
		s.log.Warn("store contention", "op", "update", "id", int64(id))
		for _, i := range chains[id] {
			out[i] = result{Err: fmt.Errorf("store: %w (contention)", application.ErrUnavailable)}
		}
	}
}

// decide applies the updates batch[chain] of one id, in order, to row (of
// which found says whether it is stored), and sets their answers in out.
// It returns the write of what they decided, if they decided to write: a
// replacement of the row, or its removal.
func (s *Store) decide(batch []write, chain []int, row plantRow, found bool, out []result) (write, bool) {
	id := batch[chain[0]].id
	if !found {
		for _, i := range chain {
			out[i] = result{Err: &domain.NotFoundError{ID: id}}
		}
		return write{}, false
	}
	stored, err := row.plant()
	if err != nil {
		s.log.Error("store fault", "op", "update", "err", err)
		for _, i := range chain {
			out[i] = result{Err: err}
		}
		return write{}, false
	}
	var (
		state   = stored
		item    string // state's item, once an update changed it
		removed bool
		events  []pendingEvent // one per update that wrote: each change, the delete
		trace   string         // the first traced one's, which the events' deliveries link to
	)
	for _, i := range chain {
		u := batch[i].arg.(updating)
		if trace == "" {
			trace = batch[i].trace
		}
		switch {
		case removed:
			out[i] = result{Err: &domain.NotFoundError{ID: id}}
		case u.check != nil:
			if err := u.check(state); err != nil {
				out[i] = result{Err: err}
				continue
			}
			out[i] = result{Value: outcome{plant: state, done: true}}
			removed = true
			events = append(events, pendingEvent{application.PlantDeleted, itemOf(state)})
		default:
			next, differs, err := u.update.On(state)
			if err != nil {
				out[i] = result{Err: err}
				continue
			}
			out[i] = result{Value: outcome{plant: next, done: true}}
			if differs {
				item = itemOf(next)
				events = append(events, pendingEvent{application.PlantChanged, item})
			}
			state = next
		}
	}
	// Changes that came back to the stored plant are written all the same
	// (a version on), since each was a write with its event.
	switch {
	case removed:
		return write{kind: &removeKind, id: id, arg: removal{version: row.Version.Int64, events: events}, trace: trace}, true
	case len(events) > 0:
		return write{kind: &replaceKind, id: id, arg: replacement{row: row.with(state, item), events: events}, trace: trace}, true
	}
	return write{}, false
}

// replacement is what replaceKind writes for one plant: its next row, and
// the events of the updates that led to it.
type replacement struct {
	row    plantRow
	events []pendingEvent
}

// removal is what removeKind deletes: the plant at the version its
// updates read, and their events, the delete's last.
type removal struct {
	version int64
	events  []pendingEvent
}

// allowAny is the check of a plain delete decided as a conditional one.
func allowAny(domain.Plant) error { return nil }

// readRows reads the stored rows of ids, with a fresh snapshot, as a read
// by id selects them (restoredColumns): without their items and records.
func (s *Store) readRows(ctx context.Context, ids []domain.ID) (map[domain.ID]plantRow, error) {
	want := make([]int64, len(ids))
	for i, id := range ids {
		want[i] = int64(id)
	}
	stmt, err := s.stmts.get(ctx, s.db, findPlants)
	if err != nil {
		return nil, err
	}
	rows, err := stmt.QueryxContext(ctx, bigintArray(want))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	found := make(map[domain.ID]plantRow, len(ids))
	var r plantRow
	scan := rowScanner(rows, &r)
	for rows.Next() {
		if err := scan(); err != nil {
			return nil, err
		}
		found[domain.ID(r.ID)] = r
	}
	return found, rows.Err()
}
