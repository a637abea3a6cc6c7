package main

import (
	"context"
	"errors"
	"io"
)

func runNavigate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return errors.New("not implemented yet")
}

func runUndoCompaction(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return errors.New("not implemented yet")
}

func runLabel(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return errors.New("not implemented yet")
}
