/** Date-style release version (year.month.patch), as TriplyDB clients expect: calver >= 23.09.0. */
export const PLATFORM_VERSION = '26.11.0';
