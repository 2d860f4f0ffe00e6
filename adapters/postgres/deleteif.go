package postgres

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/plantstore/plantstore/domain"
)

// DeletePlantIf removes the plant stored under id when it is exactly expect,
// in the statement that checks it; otherwise it answers the plant stored.
// It returns only after the batch holding the delete has committed.
func (s *Store) DeletePlantIf(ctx context.Context, id domain.ID, expect domain.Plant) (domain.Plant, bool, bool, error) {
	res, err := s.submit(ctx, write{kind: &deleteIfKind, id: id, arg: expect})
	return res.plant, !res.absent && err == nil, res.done, err
}

// deleteIfKind removes plants that still hold exactly the expected name and
// tag: under READ COMMITTED the DELETE checks that on the latest committed
// row, after waiting for any writer of it, so the check and the write are
// one step. It answers every delete: flag true for a removed plant, else
// the row of the statement's snapshot (no name when there is none); a
// snapshot row that is the expected plant was changed by a concurrent
// transaction, and is read back. Two of one id never share a statement.
var deleteIfKind = writeKind{
	name: "conditional delete",
	bit:  8,
	ctes: `expected_deletes AS (
    SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[]) AS t (id, expect_name, expect_tag)
), deleted_expected AS (
    DELETE FROM plants USING expected_deletes
    WHERE plants.id = expected_deletes.id
      AND plants.name = expected_deletes.expect_name
      AND plants.tag IS NOT DISTINCT FROM expected_deletes.expect_tag
    RETURNING plants.id
)`,
	answers: `SELECT id, NULL::text, NULL::text, true FROM deleted_expected
UNION ALL
SELECT expected_deletes.id, plants.name, plants.tag, false
FROM expected_deletes
LEFT JOIN plants ON plants.id = expected_deletes.id
WHERE expected_deletes.id NOT IN (SELECT id FROM deleted_expected)`,
	args: func(_ *Store, ws []write) []any {
		ids := make([]int64, len(ws))
		names, tags, tagged := make([]string, len(ws)), make([]string, len(ws)), make([]bool, len(ws))
		for i, w := range ws {
			p := w.arg.(domain.Plant)
			ids[i], names[i] = int64(w.id), p.Name().String()
			tags[i], tagged[i] = p.Tag().String(), p.Tag().IsSet()
		}
		return []any{bigintArray(ids), textArray(names, nil), textArray(tags, tagged)}
	},
	assumed: func(w write) result {
		return result{Err: fmt.Errorf("store: conditional delete of plant %d not answered", w.id)}
	},
	locks: true,
	read: func(s *Store, w write, name, tag sql.NullString, deleted bool) (result, bool) {
		switch {
		case deleted:
			return result{Value: outcome{done: true}}, false
		case !name.Valid:
			return result{Value: outcome{absent: true}}, false
		}
		res := s.restore(int64(w.id), name, tag)
		if res.Err == nil && res.Value.plant == w.arg.(domain.Plant) {
			return result{}, true // changed since the snapshot: read it back
		}
		return res, false
	},
}
