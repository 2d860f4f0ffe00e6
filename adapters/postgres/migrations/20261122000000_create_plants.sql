-- Plants are written once and never changed. The CHECK constraints repeat
-- the domain's rules as a second line of defence against rows written around
-- the service. They are deliberately no stricter than the domain: "not only
-- white space" is checked for the ASCII space alone (btrim), where the domain
-- refuses every Unicode white space, and the control characters are named by
-- code so that no locale can widen the class.

-- +goose Up
CREATE TABLE plants (
    id         bigint      NOT NULL PRIMARY KEY,
    name       text        NOT NULL,
    tag        text        NULL,
    created_by text        NOT NULL,
    created_at timestamptz NOT NULL,
    CONSTRAINT plants_name_check CHECK (
        char_length(name) BETWEEN 1 AND 200
        AND btrim(name) <> ''
        AND name !~ '[\x01-\x1f\x7f]'
    ),
    CONSTRAINT plants_tag_check CHECK (
        tag IS NULL OR (
            char_length(tag) BETWEEN 1 AND 64
            AND btrim(tag) <> ''
            AND tag !~ '[\x01-\x1f\x7f]'
        )
    )
);

-- +goose Down
DROP TABLE plants;
