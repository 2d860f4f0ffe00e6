package plantjson

import "github.com/plantstore/plantstore/domain"

// AppendList appends plants as a JSON array of PlantItems; none is []. Each
// item is AppendItem's, so that a page holds exactly the bytes the stores
// keep for its plants and aggregate into their pages: the memory store
// renders its pages with it, and the store suite holds the others' to it.
func AppendList(dst []byte, plants []domain.Plant) []byte {
	dst = append(dst, '[')
	for i, p := range plants {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = AppendItem(dst, p)
	}
	return append(dst, ']')
}
