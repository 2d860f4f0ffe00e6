package postgres

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

// change is what a change carries through the batch.
type change struct {
	set    application.PlantChange
	expect *domain.Plant
}

// ChangePlant applies c to the plant stored under id when expect is nil or
// is exactly the stored plant, in the statement that checks it. It returns
// only after the batch holding the change has committed.
func (s *Store) ChangePlant(ctx context.Context, id domain.ID, c application.PlantChange, expect *domain.Plant) (application.Changed, error) {
	res, err := s.submit(ctx, write{kind: &changeKind, id: id, arg: change{set: c, expect: expect}})
	return application.Changed{Plant: res.plant, Found: !res.absent, Applied: res.done}, err
}

// changeKind updates stored plants: a NULL name keeps the stored one, and
// set_tag says whether tag (NULL for none) replaces the stored tag. A
// conditional change updates only a row that still holds exactly the
// expected name and tag: under READ COMMITTED the UPDATE checks that on
// the latest committed row, after waiting for any writer of it, so the
// check and the write are one step. It answers every change: with the
// updated row and flag true, or with the row of the statement's snapshot
// (no name when there is none) and flag false; a snapshot row that would
// have taken the change was changed by a concurrent transaction, and is
// read back. Two changes of one id never share a statement, since the
// second applies over the first.
var changeKind = writeKind{
	name: "change",
	bit:  4,
	ctes: `changes AS (
    SELECT *
    FROM unnest($1::bigint[], $2::text[], $3::boolean[], $4::text[], $5::boolean[], $6::text[], $7::text[])
        AS t (id, name, set_tag, tag, conditional, expect_name, expect_tag)
), changed AS (
    UPDATE plants
    SET name = coalesce(changes.name, plants.name),
        tag = CASE WHEN changes.set_tag THEN changes.tag ELSE plants.tag END
    FROM changes
    WHERE plants.id = changes.id
      AND (NOT changes.conditional
           OR (plants.name = changes.expect_name AND plants.tag IS NOT DISTINCT FROM changes.expect_tag))
    RETURNING plants.id, plants.name, plants.tag
)`,
	answers: `SELECT id, name, tag, true FROM changed
UNION ALL
SELECT changes.id, plants.name, plants.tag, false
FROM changes
LEFT JOIN plants ON plants.id = changes.id
WHERE changes.id NOT IN (SELECT id FROM changed)`,
	args: func(_ *Store, ws []write) []any {
		n := len(ws)
		ids := make([]int64, n)
		names, tags, expectNames, expectTags := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		named, setTag, tagged, conditional, expectTagged := make([]bool, n), make([]bool, n), make([]bool, n), make([]bool, n), make([]bool, n)
		for i, w := range ws {
			c := w.arg.(change)
			ids[i] = int64(w.id)
			if c.set.Name != nil {
				names[i], named[i] = c.set.Name.String(), true
			}
			if c.set.Tag != nil {
				setTag[i], tags[i], tagged[i] = true, c.set.Tag.String(), c.set.Tag.IsSet()
			}
			if c.expect != nil {
				conditional[i] = true
				expectNames[i] = c.expect.Name().String()
				expectTags[i], expectTagged[i] = c.expect.Tag().String(), c.expect.Tag().IsSet()
			}
		}
		return []any{bigintArray(ids), textArray(names, named), boolArray(setTag), textArray(tags, tagged),
			boolArray(conditional), textArray(expectNames, conditional), textArray(expectTags, expectTagged)}
	},
	assumed: func(w write) result {
		return result{Err: fmt.Errorf("store: change of plant %d not answered", w.id)}
	},
	locks: true,
	read: func(s *Store, w write, name, tag sql.NullString, applied bool) (result, bool) {
		if !name.Valid {
			return result{Value: outcome{absent: true}}, false
		}
		res := s.restore(int64(w.id), name, tag)
		if expect := w.arg.(change).expect; !applied && res.Err == nil && (expect == nil || res.Value.plant == *expect) {
			// The snapshot's row would have taken the change, so a
			// concurrent transaction changed or deleted it since: read it
			// back, and run the change again where it still would apply.
			return result{}, true
		}
		res.Value.done = applied
		return res, false
	},
}
