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

// PlantFields are a plant's fields as plain values, as they come from
// outside (a request, a stored row) before the rules are checked, and as
// adapters take them to render or store a plant. A field of the plant is
// declared here, in NewPlant and Plant, and checked in Parse: the one place
// that knows every field.
type PlantFields struct {
	ID   int64
	Name string
	Tag  *string // nil: no tag
}

// NewPlant is a validated request to create a plant: the id the client chose
// and the content to store under it.
type NewPlant struct {
	ID   ID
	Name Name
	Tag  Tag
}

// ParseNewPlant validates f. All field problems are reported together as
// FieldErrors.
func ParseNewPlant(f PlantFields) (NewPlant, error) {
	var errs FieldErrors
	n, err := ParseName(f.Name)
	if err != nil {
		errs = append(errs, err.(*FieldError))
	}
	t := NoTag
	if f.Tag != nil {
		if t, err = ParseTag(*f.Tag); err != nil {
			errs = append(errs, err.(*FieldError))
		}
	}
	if errs != nil {
		return NewPlant{}, errs
	}
	return NewPlant{ID: ID(f.ID), Name: n, Tag: t}, nil
}

// Plant is a stored plant. A value never changes; a write stores another.
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
func RestorePlant(f PlantFields) (Plant, error) {
	np, err := ParseNewPlant(f)
	if err != nil {
		return Plant{}, err
	}
	return PlantFrom(np), nil
}

// Fields returns p's fields as plain values: what an adapter renders or
// stores.
func (p Plant) Fields() PlantFields {
	f := PlantFields{ID: int64(p.id), Name: p.name.value}
	if p.tag.IsSet() {
		tag := p.tag.value
		f.Tag = &tag
	}
	return f
}

// ID returns the plant's id.
func (p Plant) ID() ID { return p.id }

// Name returns the plant's name.
func (p Plant) Name() Name { return p.name }

// Tag returns the plant's tag, NoTag when it has none.
func (p Plant) Tag() Tag { return p.tag }

// WithName returns p named n.
func (p Plant) WithName(n Name) Plant { p.name = n; return p }

// WithTag returns p tagged t; NoTag removes its tag.
func (p Plant) WithTag(t Tag) Plant { p.tag = t; return p }

// SameContent reports whether np asks for exactly this plant: every field
// the same, compared byte for byte. It decides replay versus conflict.
func (p Plant) SameContent(np NewPlant) bool { return p == PlantFrom(np) }
