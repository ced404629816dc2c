/**
 * The keys of an inline text box, the same in the conversation and the per-turn control:
 * Enter saves (Shift+Enter is a new line where the box takes several), Escape cancels.
 */
export function saveOrCancel(
  event: KeyboardEvent,
  save: () => void,
  cancel: () => void,
  { multiline = true }: { multiline?: boolean } = {}
): void {
  if (event.key === 'Enter' && !(multiline && event.shiftKey)) {
    event.preventDefault();
    save();
  } else if (event.key === 'Escape') {
    event.preventDefault();
    event.stopPropagation();
    cancel();
  }
}
