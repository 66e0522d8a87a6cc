/**
 * Stop words for keyword mining, stored in folded form (lower case, accents
 * removed, ß -> ss) because they are compared against folded terms.
 */

const EN = `a about above after again against all almost also although always am among an and another any anyone
anything are aren around as at away back be became because become been before being below between both but by
can cannot could couldn did didn do does doesn doing don done down during each either else enough even ever every
few first for from further get gets getting give given go goes going got had hadn has hasn have haven having he her
here hers herself him himself his how however i if in into is isn it its itself just least less let like made make
makes many may me might more most much must my myself need never new next no nor not now of off often on once one
only or other others our ours ourselves out over own per perhaps put quite rather really same say says see seem
seems several shall she should shouldn since so some something sometimes still such take than that the their
theirs them themselves then there these they thing things this those though through thus to too toward under until
up upon us use used uses using very via want wants was wasn way we well were weren what whatever when where whether
which while who whom whose why will with within without won would wouldn yet you your yours yourself yourselves
ll re ve s t d m etc`;

const DE = `aber alle allem allen aller alles als also am an ander andere anderem anderen anderer anderes anders auch auf
aus bei beim bereits bin bis bist bitte da dabei dadurch dafur dagegen daher damit dann dar daran darauf daraus darf
darum das dass davon davor dazu dein deine deinem deinen deiner dem den denn der deren des deshalb dessen die dies
diese diesem diesen dieser dieses doch dort du durch eben ein eine einem einen einer eines einige einigen einmal er
es etwa etwas euch euer eure fur gab gegen gibt ging habe haben hat hatte hatten hier hin hinter ich ihm ihn ihnen
ihr ihre ihrem ihren ihrer ihres im immer in indem ins ist ja je jede jedem jeden jeder jedes jedoch jetzt kann
kannst kaum kein keine keinem keinen keiner konnen konnte machen man manche manchem manchen mancher mehr mein meine
meinem meinen meiner mit muss musste nach nachdem nein nicht nichts noch nun nur ob oder ohne sehr sei seid sein seine
seinem seinen seiner seit selbst sich sie sind so solche solchem solchen solcher soll sollen sollte sondern sowie
uber um und uns unser unsere unserem unseren unserer unter viel viele vom von vor wahrend war waren warum was weil
welche welchem welchen welcher welches wenn wer wessen wem wen woran worauf woraus wobei wodurch wofur wogegen woher wohin womit wovon wozu werde werden wie wieder will wir wird wirst wo wollen wurde wurden
zu zum zur zwar zwischen`;

const toSet = (s: string): ReadonlySet<string> => new Set(s.split(/\s+/).filter(Boolean));

export const STOP_WORDS: Readonly<Record<string, ReadonlySet<string>>> = {
  en: toSet(EN),
  de: toSet(DE),
};

/** Stop words for a language, or null when we have no list for it (English and German only). */
export function stopWordsFor(language: string): ReadonlySet<string> | null {
  return STOP_WORDS[language.slice(0, 2).toLowerCase()] ?? null;
}
