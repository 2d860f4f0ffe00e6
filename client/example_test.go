package client_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/plantstore/plantstore/client"
)

// Create a plant with a token, then read it again only if it changed. An
// answer the API refuses is not an error: its status says which of the
// response's fields holds what the API sent (JSON200, JSON409, ...).
func ExampleNewClientWithResponses() {
	ctx := context.Background()
	c, err := client.NewClientWithResponses("http://localhost:8080", client.WithBearerToken(os.Getenv("TOKEN")))
	if err != nil {
		log.Fatal(err)
	}
	var tag client.NewPlant_Tag
	if err := tag.FromTag("aroid"); err != nil {
		log.Fatal(err)
	}
	created, err := c.CreatePlantWithResponse(ctx, nil, client.NewPlant{Id: 42, Name: "Monstera deliciosa", Tag: &tag})
	if err != nil {
		log.Fatal(err) // the request did not get an answer
	}
	switch created.StatusCode() {
	case 200: // created, or the same plant sent again
		fmt.Println(created.JSON200.Name, created.Headers200.ETag)
	case 409: // another plant has this id
		log.Fatal(created.JSON409.Error, created.JSON409.Message)
	default:
		log.Fatalf("create: %d %s", created.StatusCode(), created.Body)
	}
	etag := created.Headers200.ETag
	again, err := c.GetPlantWithResponse(ctx, 42, &client.GetPlantParams{IfNoneMatch: &etag})
	if err != nil {
		log.Fatal(err)
	}
	if again.StatusCode() == 304 {
		fmt.Println("unchanged")
	}
}
