package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

// Store is every port a store adapter serves to the use cases.
type Store interface {
	application.PlantInserter
	application.PlantDeleter
	application.PlantLister
	application.PlantFinder
	application.PlantUpdater
	application.EventFeed
	application.EventPruner
}

// OutboxStore is a store with its outbox of webhook deliveries.
type OutboxStore interface {
	Store
	application.EventSource
	application.EventLog
	OutboxStats(ctx context.Context) (pending int, oldest time.Time, failed int, err error)
}

// Harness tells the suite how to get stores from one adapter.
type Harness struct {
	// Open returns a store on a fresh, empty, migrated database, closed by
	// t.Cleanup.
	Open func(t *testing.T) Store
	// Reopen, when set, closes nothing but opens a second, independent store
	// (new connection or pool) on the same database s was opened on, to
	// prove durability. It may be nil; the durability case is then skipped.
	Reopen func(t *testing.T, s Store) Store
	// OpenOutbox returns a store as Open does, announcing every stored plant
	// to receivers through its outbox.
	OpenOutbox func(t *testing.T, receivers []string) OutboxStore
	// OpenPayload returns a store as OpenOutbox does, announcing to
	// receivers what payload says; on the database of same when same is not
	// nil (a store this harness opened), so that stores of both payloads
	// share one outbox, as replicas do while the setting changes; it skips
	// the test where the adapter cannot. Nil skips the payload cases.
	OpenPayload func(t *testing.T, payload application.Payload, receivers []string, same OutboxStore) OutboxStore
}

// Run runs every case of the contract against the stores h provides.
func Run(t *testing.T, h Harness) {
	t.Helper()
	cases := []struct {
		name string
		run  func(t *testing.T, h Harness)
	}{
		{"InsertsANewPlant", insertsANewPlant},
		{"ReplaysTheSameContent", replaysTheSameContent},
		{"KeepsTheOriginalOnDifferentContent", keepsTheOriginalOnDifferentContent},
		{"AcceptsEveryInt64ID", acceptsEveryInt64ID},
		{"RoundTripsLimitLengths", roundTripsLimitLengths},
		{"RoundTripsUnicodeByteForByte", roundTripsUnicodeByteForByte},
		{"StoresInjectionAttemptsAsText", storesInjectionAttemptsAsText},
		{"KeepsTagAbsence", keepsTagAbsence},
		{"OneWinnerUnderConcurrentCreatesOfOneID", oneWinnerUnderConcurrentCreatesOfOneID},
		{"InsertsManyIDsConcurrently", insertsManyIDsConcurrently},
		{"RefusesACancelledContext", refusesACancelledContext},
		{"KeepsAcknowledgedPlants", keepsAcknowledgedPlants},
		{"DeletesAStoredPlant", deletesAStoredPlant},
		{"FreesADeletedID", freesADeletedID},
		{"KeepsEveryCountUnderRacingCreatesAndDeletes", keepsEveryCountUnderRacingCreatesAndDeletes},
		{"KeepsAcknowledgedDeletes", keepsAcknowledgedDeletes},
		{"ListsInIDOrder", listsInIDOrder},
		{"ListsAfterAnID", listsAfterAnID},
		{"ListsByExactTag", listsByExactTag},
		{"ListsNothingFromAnEmptyStore", listsNothingFromAnEmptyStore},
		{"WalksEveryStablePlantOnceWhileOthersChange", walksEveryStablePlantOnceWhileOthersChange},
		{"KeepsEveryFieldOfAPlant", keepsEveryFieldOfAPlant},
		{"ChangesAStoredPlant", changesAStoredPlant},
		{"RefusesWhatAnUpdateRefuses", refusesWhatAnUpdateRefuses},
		{"AppliesEveryUpdateOnceInOrder", appliesEveryUpdateOnceInOrder},
		{"KeepsTheOrderOfChangesCreatesAndDeletes", keepsTheOrderOfChangesCreatesAndDeletes},
		{"OneWinnerAmongChangesExpectingOnePlant", oneWinnerAmongChangesExpectingOnePlant},
		{"DeletesOnlyTheExpectedPlant", deletesOnlyTheExpectedPlant},
		{"OneWinnerAmongDeletesAndChangesExpectingOnePlant", oneWinnerAmongDeletesAndChangesExpectingOnePlant},
		{"RefusesWritesToAForbiddenState", refusesWritesToAForbiddenState},
		{"OneWinnerAmongChangesForbiddingEachOthersStates", oneWinnerAmongChangesForbiddingEachOthersStates},
		{"OneWinnerAmongDeletesAndChangesForbiddingOneState", oneWinnerAmongDeletesAndChangesForbiddingOneState},
		{"FindsStoredPlantsByID", findsStoredPlantsByID},
		{"FindsEveryAcknowledgedCreateAtOnce", findsEveryAcknowledgedCreateAtOnce},
		{"AnnouncesEveryStoredPlantToEveryReceiver", announcesEveryStoredPlantToEveryReceiver},
		{"KeepsNoEventsWithoutReceivers", keepsNoEventsWithoutReceivers},
		{"KeepsTheTraceParentOfTheCreate", keepsTheTraceParentOfTheCreate},
		{"ClaimsDueEventsOnceUntilTheLeaseEnds", claimsDueEventsOnceUntilTheLeaseEnds},
		{"SettlesAttempts", settlesAttempts},
		{"ClaimsAreExclusiveUnderConcurrency", claimsAreExclusiveUnderConcurrency},
		{"ClaimsEventsCommittedTogetherAPieceAtATime", claimsEventsCommittedTogetherAPieceAtATime},
		{"RedeliversFailedEvents", redeliversFailedEvents},
		{"KeepsAcknowledgedEvents", keepsAcknowledgedEvents},
		{"AnnouncesEveryWriteWithTheEventPayload", announcesEveryWriteWithTheEventPayload},
		{"AnnouncesOnlyCreatesWithThePlantPayload", announcesOnlyCreatesWithThePlantPayload},
		{"ClaimsEveryWriteWithItsEvent", claimsEveryWriteWithItsEvent},
		{"DeliversBothPayloadsWhicheverItWrites", deliversBothPayloadsWhicheverItWrites},
		{"KeepsTheTraceParentOfEveryWrite", keepsTheTraceParentOfEveryWrite},
		{"RecordsOneEventForEveryWrite", recordsOneEventForEveryWrite},
		{"PagesTheFeed", pagesTheFeed},
		{"PrunesOldEventsAndExpiresOldPositions", prunesOldEventsAndExpiresOldPositions},
		{"SeesEveryWriteOnceWhileWritersRace", seesEveryWriteOnceWhileWritersRace},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.run(t, h) })
	}
}

// plant builds a valid plant or fails the test.
func plant(t *testing.T, id int64, name string, tag *string) domain.Plant {
	t.Helper()
	np, err := domain.ParseNewPlant(domain.PlantFields{ID: id, Name: name, Tag: tag})
	if err != nil {
		t.Fatalf("test plant %d %q is invalid: %v", id, name, err)
	}
	return domain.PlantFrom(np)
}

func tag(s string) *string { return &s }

func record(p domain.Plant) application.Record {
	return application.Record{Plant: p, CreatedBy: "storetest", CreatedAt: time.Now().UTC()}
}

// mustInsert stores p, which must be new, and checks the store answered p.
func mustInsert(t *testing.T, s Store, p domain.Plant) {
	t.Helper()
	stored, inserted, err := s.InsertIfAbsent(context.Background(), record(p))
	if err != nil {
		t.Fatalf("InsertIfAbsent(%s): %v", describe(p), err)
	}
	if !inserted {
		t.Fatalf("InsertIfAbsent(%s) did not insert a new id", describe(p))
	}
	if stored != p {
		t.Fatalf("InsertIfAbsent(%s) returned %s", describe(p), describe(stored))
	}
}

// mustFind submits p for an id that is already stored and checks that
// nothing was inserted and the store answered want, byte for byte.
func mustFind(t *testing.T, s Store, p, want domain.Plant) domain.Plant {
	t.Helper()
	stored, inserted, err := s.InsertIfAbsent(context.Background(), record(p))
	if err != nil {
		t.Fatalf("InsertIfAbsent(%s): %v", describe(p), err)
	}
	if inserted {
		t.Fatalf("InsertIfAbsent(%s) inserted over a stored id", describe(p))
	}
	if stored != want {
		t.Fatalf("InsertIfAbsent(%s) returned %s, want the stored %s", describe(p), describe(stored), describe(want))
	}
	return stored
}
