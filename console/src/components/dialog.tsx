import type { ComponentChildren, JSX } from 'preact';
import { useEffect, useRef } from 'preact/hooks';

/**
 * The browser's modal <dialog>: focus moves in and back, Escape closes, the page behind is inert,
 * all without code of ours.
 */
export function Dialog(props: { title: string; onClose: () => void; children: ComponentChildren }): JSX.Element {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const dialog = ref.current;
    if (dialog && !dialog.open) dialog.showModal();
  }, []);
  return (
    <dialog ref={ref} class="dialog" aria-label={props.title} onClose={props.onClose}>
      <h2>{props.title}</h2>
      {props.children}
    </dialog>
  );
}

/** Asks before an action that cannot be undone; the safe choice has the focus. */
export function Confirm(props: {
  title: string;
  action: string;
  busy?: boolean;
  onConfirm: () => void;
  onCancel: () => void;
  children: ComponentChildren;
}): JSX.Element {
  return (
    <Dialog title={props.title} onClose={props.onCancel}>
      {props.children}
      <div class="actions">
        <button type="button" autofocus onClick={props.onCancel}>
          Cancel
        </button>
        <button type="button" class="danger" disabled={props.busy} onClick={props.onConfirm}>
          {props.action}
        </button>
      </div>
    </Dialog>
  );
}
