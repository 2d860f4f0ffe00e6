package postgres

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

// A page's items as the list query renders them: {"id":…,"name":…} or
// {"id":…,"name":…,"tag":…}, joined by commas. `,{"id":` starts every item
// but the first and occurs nowhere else, since quotes inside a string are
// escaped; `{"id":` likewise starts every item.
const (
	nextItem  = `,{"id":`
	itemStart = `{"id":`
)

// pageOf turns the rendered items of a list query into the page of limit
// plants: the query renders one plant more than the page holds, so that
// its presence tells that more follow, and it is cut off here. greatest is
// the greatest id among the items; the last item must carry it, which
// holds the query to its id order.
func pageOf(items string, count, limit int, greatest int64) (application.Page, error) {
	if count == 0 {
		return application.EmptyPage(), nil
	}
	lastItem := strings.LastIndex(items, itemStart)
	id, err := itemID(items, lastItem)
	if err != nil || int64(id) != greatest {
		return application.Page{}, fmt.Errorf("list page does not end with its greatest id %d: %.80q", greatest, items[max(lastItem, 0):])
	}
	page := application.Page{Count: count, Last: domain.ID(id)}
	if count > limit {
		cut := strings.LastIndex(items, nextItem)
		if cut < 0 {
			return application.Page{}, fmt.Errorf("list page of %d items has no item boundary", count)
		}
		items = items[:cut]
		if page.Last, err = itemID(items, strings.LastIndex(items, itemStart)); err != nil {
			return application.Page{}, err
		}
		page.Count, page.More = limit, true
	}
	page.JSON = make([]byte, 0, len(items)+2)
	page.JSON = append(append(append(page.JSON, '['), items...), ']')
	return page, nil
}

// itemID reads the id of the item that starts at at in items.
func itemID(items string, at int) (domain.ID, error) {
	if at < 0 {
		return 0, fmt.Errorf("list page without an item: %.80q", items)
	}
	digits := items[at+len(itemStart):]
	if end := strings.IndexByte(digits, ','); end >= 0 {
		digits = digits[:end]
	}
	id, err := strconv.ParseInt(digits, 10, 64)
	return domain.ID(id), err
}
