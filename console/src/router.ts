import { useEffect, useState } from 'react';

/** Routes live in the URL's hash (#/datasets/alice): a static host (S3, /console) serves one index.html. */
export function useRoute(): string[] {
  const read = () => window.location.hash.replace(/^#\/?/, '').split('/').filter(Boolean).map(decodeURIComponent);
  const [parts, setParts] = useState(read);
  useEffect(() => {
    const on = () => setParts(read());
    window.addEventListener('hashchange', on);
    return () => window.removeEventListener('hashchange', on);
  }, []);
  return parts;
}

export const href = (...parts: string[]): string => `#/${parts.map(encodeURIComponent).join('/')}`;
export const go = (...parts: string[]): void => {
  window.location.hash = href(...parts);
};
