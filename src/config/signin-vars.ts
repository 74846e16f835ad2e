/** Inbox sign-in (OpenID Connect) and the public URL: their variables, the rules between them, and the links and cookies they decide. */
import { optionalText, url } from './values.js'

export const signinVars = {
  /** Where people reach this bridge (links from chat platforms into the inbox); no trailing slash. */
  ASKBRIDGE_PUBLIC_URL: url('links into the inbox (https://askbridge.example.com)')
    .transform((v) => v?.replace(/\/+$/, ''))
    .meta({
      description:
        'Where people reach this bridge (behind a proxy or TLS), for links from chat cards into the inbox; with inbox sign-in, `PUBLIC_URL/inbox/callback` is the redirect URI unless `ASKBRIDGE_OIDC_REDIRECT_URI` is set.',
      unset: 'the part of `ASKBRIDGE_OIDC_REDIRECT_URI` before `/inbox/callback`, else no links',
    }),
  ASKBRIDGE_OIDC_ISSUER: url('the OpenID Connect provider (its issuer URL)').meta({
    description:
      "Inbox sign-in through OpenID Connect: the provider's issuer URL. With the client id and secret set, the inbox requires sign-in.",
    unset: 'no sign-in',
  }),
  ASKBRIDGE_OIDC_CLIENT_ID: optionalText.meta({
    description: 'Inbox sign-in: the OpenID Connect client id.',
  }),
  ASKBRIDGE_OIDC_CLIENT_SECRET: optionalText.meta({
    description: 'Inbox sign-in: the OpenID Connect client secret.',
  }),
  ASKBRIDGE_OIDC_REDIRECT_URI: url('the inbox sign-in callback (https://HOST/inbox/callback)').meta({
    description:
      "Inbox sign-in: the callback URL registered with the provider; never taken from a request's Host header.",
    unset: '`ASKBRIDGE_PUBLIC_URL/inbox/callback`',
  }),
}

/** The public URL and sign-in variables a link or cookie is decided by. */
interface Links {
  ASKBRIDGE_PUBLIC_URL?: string | undefined
  ASKBRIDGE_OIDC_REDIRECT_URI?: string | undefined
}

/** Sign-in needs all of issuer, client id and secret, and somewhere to send people back. */
export function signinProblems(get: (key: string) => string | undefined): string[] {
  const problems: string[] = []
  const oidc = ['ASKBRIDGE_OIDC_ISSUER', 'ASKBRIDGE_OIDC_CLIENT_ID', 'ASKBRIDGE_OIDC_CLIENT_SECRET']
  const oidcSet = oidc.filter((key) => get(key) !== undefined)
  if (oidcSet.length > 0 && oidcSet.length < oidc.length) {
    const missing = oidc.filter((key) => get(key) === undefined)
    problems.push(
      `${missing.join(' and ')} ${missing.length > 1 ? 'are' : 'is'} needed with ${oidcSet.join(' and ')} (inbox sign-in)`,
    )
  }
  if (
    oidcSet.length === oidc.length &&
    get('ASKBRIDGE_OIDC_REDIRECT_URI') === undefined &&
    get('ASKBRIDGE_PUBLIC_URL') === undefined
  ) {
    // Never built from a request's Host header: anyone could name their own host there.
    problems.push(
      'ASKBRIDGE_OIDC_REDIRECT_URI or ASKBRIDGE_PUBLIC_URL is needed with ASKBRIDGE_OIDC_ISSUER (where the provider sends people back after sign-in)',
    )
  }
  if (get('ASKBRIDGE_OIDC_REDIRECT_URI') !== undefined && oidcSet.length === 0) {
    problems.push('ASKBRIDGE_OIDC_REDIRECT_URI is set but ASKBRIDGE_OIDC_ISSUER is not')
  }
  return problems
}

/**
 * Where people reach the bridge, for links from chat platforms into the inbox:
 * ASKBRIDGE_PUBLIC_URL, else what precedes `/inbox/callback` in ASKBRIDGE_OIDC_REDIRECT_URI (the
 * address the sign-in provider sends people back to), else unknown (the listen address is often
 * loopback, which a link in a chat message cannot reach).
 */
export function publicUrlOf(config: Links): string | undefined {
  if (config.ASKBRIDGE_PUBLIC_URL) return config.ASKBRIDGE_PUBLIC_URL
  const redirect = config.ASKBRIDGE_OIDC_REDIRECT_URI
  const m = redirect ? /^(https?:\/\/.+?)\/inbox\/callback\/?$/.exec(redirect) : null
  return m?.[1]
}

/**
 * Where the sign-in provider sends people back: ASKBRIDGE_OIDC_REDIRECT_URI, else
 * ASKBRIDGE_PUBLIC_URL + `/inbox/callback`. Configuration only, never a request's Host header.
 */
export function redirectUriOf(config: Links): string | undefined {
  if (config.ASKBRIDGE_OIDC_REDIRECT_URI) return config.ASKBRIDGE_OIDC_REDIRECT_URI
  return config.ASKBRIDGE_PUBLIC_URL ? `${config.ASKBRIDGE_PUBLIC_URL}/inbox/callback` : undefined
}

/** Every inbox cookie (sign-in session, sign-in flow, one-time link) is `Secure` when people reach the bridge over https. */
export function secureCookiesOf(config: Links): boolean {
  return [publicUrlOf(config), redirectUriOf(config)].some((u) => u?.startsWith('https:') === true)
}
