package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
)

// Create stores p and answers the plant as stored, with its ETag. It is
// idempotent by id: when the same plant (id, name and tag) is stored
// already, as after a retry, it answers that plant as a success and
// stores nothing new. When a different plant has the id, it fails with an
// *Error matching ErrConflict (409, CodeConflict) and changes nothing.
func (c *Client) Create(ctx context.Context, p NewPlant) (Plant, error) {
	if err := c.ready(); err != nil {
		return Plant{}, err
	}
	body, err := json.Marshal(p)
	if err != nil {
		return Plant{}, fmt.Errorf("plantstore: %w", err)
	}
	resp, err := c.api.CreatePlantWithBody(ctx, nil, "application/json", bytes.NewReader(body))
	b, err := read(resp, err, http.StatusOK)
	if err != nil {
		return Plant{}, err
	}
	// The API answers the plant without its id, which is p's.
	created, err := decodePlant(resp, b)
	if err != nil {
		return Plant{}, err
	}
	created.ID = p.ID
	return created, nil
}

// Get reads the plant with the given id, with its ETag. It fails with an
// *Error matching ErrNotFound when there is none.
//
// With IfNoneMatch(etag) it answers the zero Plant and a *NotModifiedError,
// which errors.Is matches with ErrNotModified, while the plant's ETag is
// still etag: the copy the caller holds is current. The error carries the
// current ETag, which tells which one it is when the condition listed
// several.
func (c *Client) Get(ctx context.Context, id int64, conds ...Condition) (Plant, error) {
	if err := c.ready(); err != nil {
		return Plant{}, err
	}
	edit, err := conditionEditors(conds)
	if err != nil {
		return Plant{}, err
	}
	resp, err := c.api.GetPlant(ctx, id, nil, edit...)
	b, err := read(resp, err, http.StatusOK, http.StatusNotModified)
	if err != nil {
		return Plant{}, err
	}
	if resp.StatusCode == http.StatusNotModified {
		return Plant{}, &NotModifiedError{ETag: resp.Header.Get("ETag")}
	}
	return decodePlant(resp, b)
}

// Change applies patch to the plant with the given id and answers the plant
// as stored after it, with its new ETag. It fails with an *Error matching
// ErrNotFound when there is no such plant, and with one matching
// ErrPreconditionFailed, changing nothing, when a Condition does not hold:
// with IfMatch(p.ETag), a change made by someone else since p was read is
// never overwritten. Without a Condition the last change wins.
func (c *Client) Change(ctx context.Context, id int64, patch Patch, conds ...Condition) (Plant, error) {
	if err := c.ready(); err != nil {
		return Plant{}, err
	}
	edit, err := conditionEditors(conds)
	if err != nil {
		return Plant{}, err
	}
	body, err := json.Marshal(patch)
	if err != nil {
		return Plant{}, fmt.Errorf("plantstore: %w", err)
	}
	resp, err := c.api.ChangePlantWithBody(ctx, id, nil, "application/merge-patch+json", bytes.NewReader(body), edit...)
	b, err := read(resp, err, http.StatusOK)
	if err != nil {
		return Plant{}, err
	}
	return decodePlant(resp, b)
}

// Delete deletes the plant with the given id; its id is free again
// afterwards. It fails with an *Error matching ErrNotFound when there is no
// such plant (a retried delete whose first attempt went through answers
// so), and with one matching ErrPreconditionFailed, deleting nothing, when
// a Condition does not hold.
func (c *Client) Delete(ctx context.Context, id int64, conds ...Condition) error {
	if err := c.ready(); err != nil {
		return err
	}
	edit, err := conditionEditors(conds)
	if err != nil {
		return err
	}
	resp, err := c.api.DeletePlant(ctx, id, nil, edit...)
	_, err = read(resp, err, http.StatusNoContent)
	return err
}
