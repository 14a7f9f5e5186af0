import type { JSX } from 'preact';
import { useRef, useState } from 'preact/hooks';
import { Dialog } from './dialog';

/** Shows a secret the service will never show again (an API key, a signing secret), with Copy. */
export function SecretDialog(props: { title: string; label: string; secret: string; onClose: () => void }): JSX.Element {
  const input = useRef<HTMLInputElement>(null);
  const [copied, setCopied] = useState<'no' | 'yes' | 'failed'>('no');
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(props.secret);
      setCopied('yes');
    } catch (err) {
      // Clipboard access needs a secure context and permission; selecting the text lets the user copy by hand.
      console.warn('clipboard write refused', err);
      input.current?.select();
      setCopied('failed');
    }
  };
  return (
    <Dialog title={props.title} onClose={props.onClose}>
      <p class="note warn">
        <strong>Copy it now: you will not see it again.</strong> Store it somewhere safe, such as a secrets manager.
      </p>
      <label class="field">
        <span>{props.label}</span>
        <div class="copy-row">
          <input
            ref={input}
            class="mono"
            readOnly
            value={props.secret}
            onFocus={(e) => e.currentTarget.select()}
            aria-label={props.label}
          />
          <button type="button" class="primary" autofocus onClick={copy}>
            {copied === 'yes' ? 'Copied' : 'Copy'}
          </button>
        </div>
      </label>
      <p class="muted" role="status" aria-live="polite">
        {copied === 'yes'
          ? 'Copied to the clipboard.'
          : copied === 'failed'
            ? 'The browser refused clipboard access: the text is selected, press Ctrl+C (⌘C).'
            : ''}
      </p>
      <div class="actions">
        <button type="button" onClick={props.onClose}>
          I have stored it
        </button>
      </div>
    </Dialog>
  );
}
