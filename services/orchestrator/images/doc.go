// Package images makes the images sandboxes run: the default sandbox image,
// or one built from it with the apt packages and files of built-in tool
// families and the user's tool files (Builder), the checks of those tool
// files and families, and the garbage collection of the built images that
// no container uses (Collect).
package images
