package domain

// Name is a plant's name: 1 to 200 code points, not only white space, no
// control characters. The zero Name is not valid; build one with ParseName.
type Name struct{ value string }

// ParseName returns s as a Name, or a *FieldError for "name".
func ParseName(s string) (Name, error) {
	if problem := checkText(s, MaxNameLength); problem != "" {
		return Name{}, &FieldError{Field: "name", Problem: problem}
	}
	return Name{value: s}, nil
}

// String returns the name exactly as it was given.
func (n Name) String() string { return n.value }

// Tag says what kind of plant it is. The zero Tag means "no tag".
type Tag struct{ value string }

// NoTag is the absent tag.
var NoTag = Tag{}

// ParseTag returns s as a Tag: 1 to 64 code points with the same character
// rules as a name, or a *FieldError for "tag". An empty string is refused, not
// taken as "no tag": absence is spelled NoTag.
func ParseTag(s string) (Tag, error) {
	if problem := checkText(s, MaxTagLength); problem != "" {
		return Tag{}, &FieldError{Field: "tag", Problem: problem}
	}
	return Tag{value: s}, nil
}

// IsSet reports whether the plant has a tag.
func (t Tag) IsSet() bool { return t.value != "" }

// String returns the tag exactly as it was given, or "" for NoTag.
func (t Tag) String() string { return t.value }

// NewPlant is a validated request to create a plant: the id the client chose
// and the content to store under it.
type NewPlant struct {
	ID   ID
	Name Name
	Tag  Tag
}

// ParseNewPlant validates raw field values. tag nil means no tag. All field
// problems are reported together as FieldErrors.
func ParseNewPlant(id int64, name string, tag *string) (NewPlant, error) {
	var errs FieldErrors
	n, err := ParseName(name)
	if err != nil {
		errs = append(errs, err.(*FieldError))
	}
	t := NoTag
	if tag != nil {
		if t, err = ParseTag(*tag); err != nil {
			errs = append(errs, err.(*FieldError))
		}
	}
	if errs != nil {
		return NewPlant{}, errs
	}
	return NewPlant{ID: ID(id), Name: n, Tag: t}, nil
}

// Plant is a stored plant. Its content never changes once stored.
type Plant struct {
	id   ID
	name Name
	tag  Tag
}

// PlantFrom builds the Plant that np describes.
func PlantFrom(np NewPlant) Plant {
	return Plant{id: np.ID, name: np.Name, tag: np.Tag}
}

// RestorePlant rebuilds a Plant read back from storage. It validates again,
// so a row that bypassed the rules is reported instead of served.
func RestorePlant(id int64, name string, tag *string) (Plant, error) {
	np, err := ParseNewPlant(id, name, tag)
	if err != nil {
		return Plant{}, err
	}
	return PlantFrom(np), nil
}

// ID returns the plant's id.
func (p Plant) ID() ID { return p.id }

// Name returns the plant's name.
func (p Plant) Name() Name { return p.name }

// Tag returns the plant's tag, NoTag when it has none.
func (p Plant) Tag() Tag { return p.tag }

// SameContent reports whether np asks for exactly this plant: same id, same
// name and same tag, compared byte for byte. It decides replay versus conflict.
func (p Plant) SameContent(np NewPlant) bool {
	return p.id == np.ID && p.name == np.Name && p.tag == np.Tag
}
